// How a local training job turns on Libra's hot path: the `libra train`
// flags, and the LIBRA_* environment they become on every node (the
// runtime's contract, docs/hotpath.md "Turning it on").
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace libra::train {

struct LibraOptions {
  bool local_switch = false;      // start a switchd on loopback for the job
  std::string switch_address;     // an existing switchd's UDP data address
  std::string switch_control;     // ... and its control address
  std::string hot_set_path;       // hot-set file; "" : sample instead
  double sample_fraction = 0.05;  // share of each worker's pushes sampled
  uint64_t capacity_cells = 0;    // hot-set capacity when sampling; 0: the whole switch
  std::string job_token;          // "" : the runtime's default

  bool enabled() const { return local_switch || !switch_address.empty(); }

  // Throws std::invalid_argument naming the flag at fault (conflicting or
  // missing addresses, a bad fraction, a hot-set file that cannot be read).
  void Validate() const;
};

// The sampling phase in pushes per worker: ceil(fraction * pushes), at least 1.
uint64_t SampleEpochs(double fraction, uint64_t pushes_per_worker);

// The LIBRA_* variables for every node of a job whose switch listens at
// `data_address` / `control_address` and whose workers push
// `pushes_per_worker` times.
std::map<std::string, std::string> LibraEnvironment(const LibraOptions& options,
                                                    const std::string& data_address,
                                                    const std::string& control_address,
                                                    uint64_t pushes_per_worker);

}  // namespace libra::train
