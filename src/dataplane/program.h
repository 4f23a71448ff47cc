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
#include "dataplane/switch_backend.h"
#include "wire/pipeline_profile.h"
#include "wire/switch_job.h"

namespace libra::dataplane {

// The pipeline model: the back end `libra switchd --dataplane model` runs.
class Program final : public SwitchBackend {
 public:
  explicit Program(PipelineProfile profile = PipelineProfile::Tofino1());

  InstallResult InstallJob(const SwitchJob& job) override;
  void RemoveJob() override;
  const SwitchJob* job() const override { return state_.job ? &*state_.job : nullptr; }
  const PipelineProfile& profile() const override { return state_.profile; }

  // Runs one packet from `source` through the pipeline; replies are appended
  // to `out`. Malformed and unexpected packets are dropped and counted.
  void Process(std::span<const std::uint8_t> packet, const UdpEndpoint& source,
               OutputBatch& out) override;

  const ProgramCounters& counters() const { return state_.counters; }
  ProgramCounters Counters() const override { return state_.counters; }
  const PipelineState& state() const { return state_; }

 private:
  PipelineState state_;
  PacketContext ctx_;  // reused: a packet's PHV
  PassId next_pass_ = 1;
};

}  // namespace libra::dataplane
