// The switch program: the per-packet pipeline plus the control-plane calls
// that install and remove a job. One Program is one switch pipe; it is not
// thread-safe (the data path is one thread, as one pipe is one pipeline).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "dataplane/counters.h"
#include "dataplane/output_batch.h"
#include "dataplane/packet_context.h"
#include "dataplane/pipeline_state.h"
#include "wire/pipeline_profile.h"
#include "wire/switch_job.h"

namespace libra::dataplane {

struct InstallResult {
  bool ok = false;
  std::string error;  // why the job was refused
  FitReport fit;      // register placement and memory against the budget
};

class Program {
 public:
  explicit Program(PipelineProfile profile = PipelineProfile::Tofino1());

  // Replaces any installed job, with every register cleared. A refused job
  // leaves the installed one untouched.
  InstallResult InstallJob(const SwitchJob& job);
  void RemoveJob();
  const SwitchJob* job() const { return state_.job ? &*state_.job : nullptr; }
  const PipelineProfile& profile() const { return state_.profile; }

  // Runs one packet from `source` through the pipeline; replies are appended
  // to `out`. Malformed and unexpected packets are dropped and counted.
  void Process(std::span<const std::uint8_t> packet, const UdpEndpoint& source, OutputBatch& out);

  const ProgramCounters& counters() const { return state_.counters; }
  const PipelineState& state() const { return state_; }

 private:
  PipelineState state_;
  PacketContext ctx_;  // reused: a packet's PHV
  PassId next_pass_ = 1;
};

}  // namespace libra::dataplane
