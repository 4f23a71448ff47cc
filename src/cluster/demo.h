// `libra demo`: the project's main job for a new user, with no arguments.
// Generates (once) a synthetic CTR data set, finds its hot set with the
// offline profiler, then trains the same model on the same data and seed
// twice: with the plain parameter server, and with Libra (hot keys
// aggregated in a `libra switchd`). Prints a side-by-side table and writes a
// JSON report and figures next to the data.
//
// Where it trains (`network`):
//   emulated: on a cluster of network namespaces whose links are shaped to
//     `rate_mbit` (NetnsCluster, cluster_run.h), the setting Libra is for;
//     then a short sweep over `sweep_mbit` shows the speedup against the
//     link speed. Needs root.
//   loopback: every process on this machine's loopback, where bytes are
//     free and the software switch only costs CPU (Libra loses there).
//   "": emulated when a cluster can be built here, else loopback, with one
//     line saying why.
//
// The demo lives in src/cluster, not src/train, because it runs on both: the
// loopback job (train) and the emulated cluster (cluster, above train).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace libra::cluster {

struct DemoOptions {
  std::string out_dir = "libra-demo";
  std::string data_path;  // "" : generate (or reuse) a synthetic set in out_dir
  uint64_t rows = 200'000;
  std::string model = "lr";
  uint32_t epochs = 2;
  uint32_t batch = 1000;  // per worker
  int workers = 4;
  int servers = 1;
  uint64_t seed = 1;
  // "auto": of the keys that fit the switch, the prefix the cost model
  // (hot/cost_model.h) predicts pays on these links, maybe none (then the
  // Libra run is plain and its report says why); a number: that many
  // switch cells, forced ("0": the whole switch).
  std::string capacity = "auto";
  std::string libra = "both";  // "on", "off" or "both"
  std::string network;         // "emulated", "loopback" or "" (see above)
  double rate_mbit = 20;       // emulated: each direction of each host link
  // Emulated: the link speeds of the sweep (none: no sweep). The point at
  // rate_mbit is the main run; the others train for at least sweep_epochs,
  // more on fast links so that each run lasts a few seconds.
  std::vector<double> sweep_mbit{20, 100, 1000};
  uint32_t sweep_epochs = 1;
  double run_timeout_s = 600;  // one emulated training run
};

// `self` is the path of the `libra` binary. Returns an exit code.
int RunDemo(const DemoOptions& options, const std::string& self);

}  // namespace libra::cluster
