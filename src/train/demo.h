// `libra demo`: the project's main job for a new user, with no arguments.
// Generates (once) a synthetic CTR data set, trains on a local cluster and
// prints a summary; the JSON report goes next to the data.
//
// Until the switch hot path exists it runs the plain parameter server, and
// says so.
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
  int workers = 4;
  int servers = 1;
  uint64_t seed = 1;
};

inline constexpr char kNoHotPathNotice[] =
    "hot path not yet available: running the plain parameter server";

// `self` is the path of the `libra` binary. Returns an exit code.
int RunDemo(const DemoOptions& options, const std::string& self);

}  // namespace libra::train
