// `libra bench dataplane`: packets and values per second through the switch
// program in one thread (src/dataplane/program_benchmark.h).
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "dataplane/program_benchmark.h"

namespace libra::tool {
namespace {

struct BenchDataplaneFlags {
  dataplane::ProgramBenchmarkOptions options;
  std::string json_path;
};

int RunBenchDataplane(const BenchDataplaneFlags& flags) {
  dataplane::ProgramBenchmarkResult r;
  try {
    r = dataplane::RunProgramBenchmark(flags.options, dataplane::PipelineProfile::Tofino1());
  } catch (const std::exception& e) {
    std::cerr << "bench dataplane: " << e.what() << "\n";
    return 1;
  }
  const nlohmann::json report = {{"benchmark", "dataplane"},
                                 {"slots_per_packet", flags.options.slots_per_packet},
                                 {"workers", flags.options.workers},
                                 {"cells_per_array", flags.options.cells_per_array},
                                 {"scattered_rows", flags.options.scattered_rows},
                                 {"packets", r.packets},
                                 {"values", r.values},
                                 {"one_row_packets", r.one_row_packets},
                                 {"seconds", r.seconds},
                                 {"cpu_seconds", r.cpu_seconds},
                                 {"packets_per_second", r.packets_per_second},
                                 {"packets_per_cpu_second", r.packets_per_cpu_second},
                                 {"values_per_second", r.values_per_second},
                                 {"register_bits_used", r.register_bits_used},
                                 {"register_bits_budget", r.register_bits_budget},
                                 {"register_share_tofino1", r.register_share},
                                 {"target_packets_per_second", 5e6}};
  std::printf("%-28s %14s\n", "dataplane (one thread)", "");
  std::printf("%-28s %14d\n", "slots per packet", flags.options.slots_per_packet);
  std::printf("%-28s %14s\n", "rows per packet", flags.options.scattered_rows ? "P" : "1");
  std::printf("%-28s %14.2f M/s\n", "packets", r.packets_per_second / 1e6);
  std::printf("%-28s %14.2f M/s\n", "packets per CPU second", r.packets_per_cpu_second / 1e6);
  std::printf("%-28s %14.1f M/s\n", "values", r.values_per_second / 1e6);
  std::printf("%-28s %13.1f %%\n", "register memory (tofino1)", 100 * r.register_share);
  if (!flags.json_path.empty()) {
    std::ofstream out(flags.json_path);
    if (!(out << report.dump(2) << "\n")) {
      std::cerr << "bench dataplane: cannot write " << flags.json_path << "\n";
      return 1;
    }
  }
  return 0;
}

}  // namespace

void AddBenchDataplaneCommand(CLI::App& bench, Runner& run) {
  auto flags = std::make_shared<BenchDataplaneFlags>();
  CLI::App* sub = bench.add_subcommand("dataplane", "Switch program throughput, one thread");
  sub->add_option("--json", flags->json_path, "write the results here");
  sub->add_option("--seconds", flags->options.seconds, "how long to run")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->add_option("--slots", flags->options.slots_per_packet, "slots per packet P")
      ->check(CLI::Range(1, 32))
      ->capture_default_str();
  sub->add_option("--workers", flags->options.workers, "workers sending DATA")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  sub->add_option("--cells", flags->options.cells_per_array, "hot cells per register array")
      ->check(CLI::Range(1, 12288))
      ->capture_default_str();
  sub->add_flag("--scattered-rows", flags->options.scattered_rows,
                "slot j of a packet addresses a shuffled row of array j (not one row for all)");
  sub->callback([&run, flags] { run = [flags] { return RunBenchDataplane(*flags); }; });
}

}  // namespace libra::tool
