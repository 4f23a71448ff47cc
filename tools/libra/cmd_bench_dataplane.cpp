// `libra bench dataplane`: packets and values per second through the switch
// program in one thread (src/dataplane/program_benchmark.h).
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "bench/program_benchmark.h"
#include "bench/push_traffic.h"
#include "commands.h"

namespace libra::tool {
namespace {

// What the packets look like (--traffic).
enum class Traffic { kOneRow, kScatteredRows, kPushes };

struct BenchDataplaneFlags {
  Traffic traffic = Traffic::kOneRow;
  dataplane::ProgramBenchmarkOptions options;
  hotpath::PushTrafficOptions pushes;
  double seconds = 2.0;
  std::string json_path;
};

const char* TrafficName(Traffic traffic) {
  switch (traffic) {
    case Traffic::kOneRow:
      return "one-row";
    case Traffic::kScatteredRows:
      return "scattered";
    case Traffic::kPushes:
      return "pushes";
  }
  return "?";
}

int RunBenchDataplane(const BenchDataplaneFlags& flags) {
  dataplane::BenchTraffic traffic;
  nlohmann::json pushes;  // what the made pushes look like, for --traffic pushes
  dataplane::ProgramBenchmarkResult r;
  try {
    if (flags.traffic == Traffic::kPushes) {
      hotpath::PushTrafficOptions options = flags.pushes;
      options.workers = flags.options.workers;
      options.slots_per_packet = flags.options.slots_per_packet;
      options.cells_per_array = flags.options.cells_per_array;
      hotpath::PushTraffic made = hotpath::MakePushTraffic(options);
      pushes = {{"batch", options.batch},
                {"fields", options.fields},
                {"keys", options.keys},
                {"skew", options.skew},
                {"hot_keys", made.hot_keys},
                {"hot_share", made.hot_share},
                {"values_per_packet", double(made.values) / double(made.packets)},
                {"packets_per_epoch", double(made.packets) / options.iterations},
                {"cells_per_epoch", made.cells_per_epoch}};
      traffic = std::move(made.traffic);
    } else {
      dataplane::ProgramBenchmarkOptions options = flags.options;
      options.scattered_rows = flags.traffic == Traffic::kScatteredRows;
      traffic = dataplane::MakeRowTraffic(options);
    }
    r = dataplane::RunProgramBenchmark(traffic, flags.seconds,
                                       dataplane::PipelineProfile::Tofino1());
  } catch (const std::exception& e) {
    std::cerr << "bench dataplane: " << e.what() << "\n";
    return 1;
  }
  nlohmann::json report = {{"benchmark", "dataplane"},
                           {"traffic", TrafficName(flags.traffic)},
                           {"slots_per_packet", flags.options.slots_per_packet},
                           {"workers", flags.options.workers},
                           {"cells_per_array", flags.options.cells_per_array},
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
  if (!pushes.is_null()) report["pushes"] = pushes;
  std::printf("%-28s %14s\n", "dataplane (one thread)", "");
  std::printf("%-28s %14d\n", "slots per packet", flags.options.slots_per_packet);
  std::printf("%-28s %14s\n", "traffic", TrafficName(flags.traffic));
  if (!pushes.is_null()) {
    std::printf("%-28s %14.1f\n", "values per packet", pushes["values_per_packet"].get<double>());
    std::printf("%-28s %14.0f\n", "packets per epoch", pushes["packets_per_epoch"].get<double>());
    std::printf("%-28s %14.0f\n", "cells per epoch", pushes["cells_per_epoch"].get<double>());
    std::printf("%-28s %13.1f %%\n", "hot share of key updates",
                100 * pushes["hot_share"].get<double>());
  }
  std::printf("%-28s %13.1f %%\n", "packets on the row loop",
              r.packets == 0 ? 0.0 : 100.0 * double(r.one_row_packets) / double(r.packets));
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
  sub->add_option("--seconds", flags->seconds, "how long to run")
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
  sub->add_option("--traffic", flags->traffic,
                  "one-row: packet k of every worker fills row k; scattered: slot j of a packet "
                  "addresses a shuffled row of array j; pushes: workers' sparse pushes of Zipf "
                  "batches, packed as workers pack them")
      ->transform(CLI::CheckedTransformer(
          std::map<std::string, Traffic>{{"one-row", Traffic::kOneRow},
                                         {"scattered", Traffic::kScatteredRows},
                                         {"pushes", Traffic::kPushes}}))
      ->default_str("one-row");
  sub->add_option("--batch", flags->pushes.batch, "pushes: rows per worker per iteration")
      ->check(CLI::Range(1u, 1000000u))
      ->capture_default_str();
  sub->add_option("--skew", flags->pushes.skew, "pushes: Zipf exponent of key popularity")
      ->check(CLI::Range(0.0, 4.0))
      ->capture_default_str();
  sub->callback([&run, flags] { run = [flags] { return RunBenchDataplane(*flags); }; });
}

}  // namespace libra::tool
