// `libra bench overhead [--json FILE]`: plain PS against Libra on loopback,
// configuration by configuration, with the hot path's fixed cost split out
// (src/train/overhead_bench.h).
#include <fstream>
#include <iostream>
#include <memory>
#include <stdexcept>

#include "commands.h"
#include "train/overhead_bench.h"

namespace libra::tool {

void AddBenchOverheadCommand(CLI::App& bench, Runner& run) {
  struct Flags {
    train::OverheadBenchOptions options;
    std::string json_path;
  };
  auto flags = std::make_shared<Flags>();
  train::OverheadBenchOptions& o = flags->options;
  CLI::App* sub = bench.add_subcommand(
      "overhead",
      "Plain PS against Libra on loopback: samples/s, ratio, the iteration's time split and "
      "packets and bytes per epoch at every node, for every configuration");
  sub->add_option("--out-dir", o.out_dir, "cached data sets and run reports")
      ->capture_default_str();
  sub->add_option("--rows", o.rows, "rows of each data set")->capture_default_str();
  sub->add_option("--epochs", o.epochs, "epochs of each run")->capture_default_str();
  sub->add_option("--models", o.models, "lr, fm, deepfm (deepfm on Criteo-format data)")
      ->delimiter(',')
      ->capture_default_str();
  sub->add_option("--batches", o.batches, "batch per worker")
      ->delimiter(',')
      ->capture_default_str();
  sub->add_option("--workers", o.workers, "workers")->delimiter(',')->capture_default_str();
  sub->add_option("--servers", o.servers, "servers")->delimiter(',')->capture_default_str();
  sub->add_option("--hot-sets", o.hot_sets,
                  "auto (the cost model's), whole (every sampled key that fits), a number of "
                  "keys to force, or plain (the plain PS against itself: the bench's noise)")
      ->delimiter(',')
      ->capture_default_str();
  sub->add_option("--repeat", o.repeat,
                  "rounds of every configuration, interleaved (odd rounds run plain last); "
                  "the summary gives each configuration's median ratio, and each hot set's "
                  "geometric mean over every round")
      ->capture_default_str();
  sub->add_flag("--realtime", o.realtime,
                "run every job, plain and Libra alike, under SCHED_FIFO (root): a woken thread "
                "runs at once instead of waiting for its core (docs/PERFORMANCE.md)");
  sub->add_option("--json", flags->json_path, "write the report here");
  sub->callback([&run, flags] {
    run = [flags] {
      try {
        train::CheckOverheadBenchOptions(flags->options);
      } catch (const std::invalid_argument& e) {
        std::cerr << "bench overhead: " << e.what() << "\n";
        return 2;
      }
      if (flags->options.realtime && !EnterRealtime("bench overhead")) return 2;
      try {
        const nlohmann::json report = train::RunOverheadBench(flags->options, SelfPath());
        if (!flags->json_path.empty()) {
          std::ofstream(flags->json_path) << report.dump(2) << "\n";
          std::cout << "wrote " << flags->json_path << "\n";
        }
      } catch (const std::exception& e) {
        std::cerr << "bench overhead: " << e.what() << "\n";
        return 1;
      }
      return 0;
    };
  });
}

}  // namespace libra::tool
