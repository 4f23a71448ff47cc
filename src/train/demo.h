// `libra demo`: the project's main job for a new user, with no arguments.
// Generates (once) a synthetic CTR data set, finds its hot set with the
// offline profiler, then trains the same model on the same data and seed on
// a local cluster twice: with the plain parameter server, and with Libra
// (hot keys aggregated in a local switchd). Prints a side-by-side table and
// writes a JSON report and figures next to the data.
#pragma once

#include <cstdint>
#include <string>

namespace libra::train {

struct DemoOptions {
  std::string out_dir = "libra-demo";
  std::string data_path;  // "" : generate (or reuse) a synthetic set in out_dir
  uint64_t rows = 400'000;
  std::string model = "lr";
  uint32_t epochs = 2;
  uint32_t batch = 1000;  // per worker
  int workers = 4;
  int servers = 1;
  uint64_t seed = 1;
  uint64_t capacity_cells = 30000;  // hot-set capacity in switch cells
  std::string libra = "both";       // "on", "off" or "both"
};

// `self` is the path of the `libra` binary. Returns an exit code.
int RunDemo(const DemoOptions& options, const std::string& self);

}  // namespace libra::train
