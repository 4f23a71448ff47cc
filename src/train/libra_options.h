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
  double sample_fraction = 0.05;  // share of each worker's pushes counted
  // The hot set when sampling: "auto", the set the cost model predicts pays
  // on these links (maybe none: the job runs plain); or a number of switch
  // cells that forces a set that large ("0": the whole switch).
  std::string capacity = "auto";
  uint64_t link_mbit = 0;                // every host's link, for the cost model; 0: unknown
  std::string plain_epoch = "measured";  // LIBRA_PLAIN_EPOCH: measured or predicted
  std::string job_token;                 // "" : the runtime's default

  bool enabled() const { return local_switch || !switch_address.empty(); }

  // Throws std::invalid_argument naming the flag at fault (conflicting or
  // missing addresses, a bad fraction, a hot-set file that cannot be read).
  void Validate() const;
};

// Throws std::invalid_argument unless `capacity` is "auto" or a cell count.
void CheckCapacity(const std::string& capacity);

// The sampling phase in pushes per worker: twice the pushes counted,
// ceil(fraction * pushes) and at least 1, so that its second half hides the
// JOIN (just those counted for a job of 1 or 2 pushes).
uint64_t SampleEpochs(double fraction, uint64_t pushes_per_worker);

// The LIBRA_* variables for every node of a job whose switch listens at
// `data_address` / `control_address` and whose workers push
// `pushes_per_worker` times.
std::map<std::string, std::string> LibraEnvironment(const LibraOptions& options,
                                                    const std::string& data_address,
                                                    const std::string& control_address,
                                                    uint64_t pushes_per_worker);

}  // namespace libra::train
