#include "train/libra_options.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <thread>

#include "hot/hot_set.h"
#include "wire/switch_job.h"

namespace libra::train {

void LibraOptions::Validate() const {
  if (local_switch && !switch_address.empty()) {
    throw std::invalid_argument("--libra starts a local switch; it cannot go with --switch");
  }
  if (switch_address.empty() != switch_control.empty()) {
    throw std::invalid_argument("--switch and --switch-control go together");
  }
  CheckCapacity(capacity);
  if (!enabled()) {
    if (!hot_set_path.empty() || capacity != "auto" || !job_token.empty()) {
      throw std::invalid_argument("--hot-set, --capacity and --job-token need --libra or --switch");
    }
    return;
  }
  // Checked here, so the message comes once from `libra train` and not from
  // every node it starts.
  if (!switch_address.empty() && !UdpEndpoint::Parse(switch_address)) {
    throw std::invalid_argument("--switch '" + switch_address + "' is not an IPv4 address:port");
  }
  const std::string control =
      switch_control.starts_with("tcp://") ? switch_control.substr(6) : switch_control;
  if (!switch_control.empty() && !UdpEndpoint::Parse(control)) {
    throw std::invalid_argument("--switch-control '" + switch_control +
                                "' is not an IPv4 address:port");
  }
  if (!(sample_fraction > 0.0 && sample_fraction <= 1.0)) {
    throw std::invalid_argument("--sample must be in (0, 1]");
  }
  // Read it here, so a bad file is named before any process starts.
  if (!hot_set_path.empty()) hot::ReadHotSetFile(hot_set_path);
}

void CheckCapacity(const std::string& capacity) {
  if (capacity == "auto") return;
  if (capacity.empty() || capacity.size() > 19 ||
      capacity.find_first_not_of("0123456789") != std::string::npos) {
    throw std::invalid_argument("--capacity must be 'auto' or a number of switch cells, not '" +
                                capacity + "'");
  }
}

uint64_t SampleEpochs(double fraction, uint64_t pushes_per_worker) {
  const double counted =
      std::max(1.0, std::ceil(fraction * static_cast<double>(pushes_per_worker)));
  // The workers count the first half of the phase and send their JOIN; the
  // second half hides the controller's choice (HotPathConfig::join_epoch),
  // where with no second half every worker would wait for it.
  if (pushes_per_worker <= 2) return static_cast<uint64_t>(counted);
  return 2 * static_cast<uint64_t>(counted);
}

std::map<std::string, std::string> LibraEnvironment(const LibraOptions& options,
                                                    const std::string& data_address,
                                                    const std::string& control_address,
                                                    uint64_t pushes_per_worker) {
  std::map<std::string, std::string> env{{"LIBRA_SWITCH", data_address},
                                         {"LIBRA_SWITCH_CONTROL", control_address}};
  if (!options.hot_set_path.empty()) {
    env["LIBRA_HOT_SET"] = options.hot_set_path;
  } else {
    env["LIBRA_SAMPLE_EPOCHS"] =
        std::to_string(SampleEpochs(options.sample_fraction, pushes_per_worker));
    env["LIBRA_CAPACITY"] = options.capacity;
    if (options.link_mbit > 0) env["LIBRA_LINK_MBIT"] = std::to_string(options.link_mbit);
    env["LIBRA_PLAIN_EPOCH"] = options.plain_epoch;
    // A local job: every node and the switch run on this machine's cores.
    env["LIBRA_SHARED_CORES"] = std::to_string(std::max(1u, std::thread::hardware_concurrency()));
  }
  if (!options.job_token.empty()) env["LIBRA_JOB_TOKEN"] = options.job_token;
  return env;
}

}  // namespace libra::train
