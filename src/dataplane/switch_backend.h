// What the switch's control plane and its tests see of a switch program,
// whichever back end runs it: the C++ pipeline model (Program) or the XDP
// program in the kernel (src/xdp). The control port installs and removes
// jobs and reads counters through it; the scenario tests drive both back
// ends with the same packets through Process.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "dataplane/counters.h"
#include "dataplane/output_batch.h"
#include "wire/pipeline_profile.h"
#include "wire/switch_job.h"

namespace libra::dataplane {

struct InstallResult {
  bool ok = false;
  std::string error;  // why the job was refused
  FitReport fit;      // register placement and memory against the budget
};

class SwitchBackend {
 public:
  virtual ~SwitchBackend() = default;

  // Replaces any installed job, with every register cleared. A refused job
  // leaves the installed one untouched.
  virtual InstallResult InstallJob(const SwitchJob& job) = 0;
  virtual void RemoveJob() = 0;
  virtual const SwitchJob* job() const = 0;
  virtual const PipelineProfile& profile() const = 0;
  // A snapshot (the XDP back end sums per-CPU counters).
  virtual ProgramCounters Counters() const = 0;
  // What only this back end counts, by name (the XDP program's upcalls,
  // for one); none for the model.
  virtual std::vector<std::pair<std::string, std::uint64_t>> BackendCounters() const { return {}; }
  // Runs one packet from `source` through the program; replies are appended
  // to `out`.
  virtual void Process(std::span<const std::uint8_t> packet, const UdpEndpoint& source,
                       OutputBatch& out) = 0;
};

}  // namespace libra::dataplane
