// `libra bench switchd`: DATA packets per second through libra-switchd over
// loopback, ACKed, from several senders (src/switchd/switchd_benchmark.h).
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "bench/switchd_benchmark.h"
#include "commands.h"

namespace libra::tool {
namespace {

struct BenchSwitchdFlags {
  switchd::SwitchdBenchmarkOptions options;
  std::string json_path;
};

int RunBenchSwitchd(const BenchSwitchdFlags& flags) {
  switchd::SwitchdBenchmarkResult r;
  try {
    r = switchd::RunSwitchdBenchmark(flags.options);
  } catch (const std::exception& e) {
    std::cerr << "bench switchd: " << e.what() << "\n";
    return 1;
  }
  const nlohmann::json report = {{"benchmark", "switchd"},
                                 {"senders", flags.options.senders},
                                 {"slots_per_packet", flags.options.slots_per_packet},
                                 {"window", flags.options.window},
                                 {"seconds", r.seconds},
                                 {"packets_acked", r.packets_acked},
                                 {"packets_sent", r.packets_sent},
                                 {"switch_data_packets", r.switch_data_packets},
                                 {"switch_values_aggregated", r.switch_values_aggregated},
                                 {"switch_cpu_seconds", r.switch_cpu_seconds},
                                 {"process_cpu_seconds", r.process_cpu_seconds},
                                 {"packets_per_second", r.packets_per_second},
                                 {"packets_per_switch_cpu_second", r.packets_per_switch_cpu_second},
                                 {"values_per_second", r.values_per_second},
                                 {"hardware_threads", std::thread::hardware_concurrency()},
                                 {"target_packets_per_second", 5e5}};
  std::printf("%-28s %14s\n", "switchd over loopback", "");
  std::printf("%-28s %14d\n", "senders", flags.options.senders);
  std::printf("%-28s %14llu\n", "DATA packets ACKed",
              static_cast<unsigned long long>(r.packets_acked));
  std::printf("%-28s %14.0f /s\n", "DATA packets", r.packets_per_second);
  std::printf("%-28s %14.0f /s\n", "per switch CPU second", r.packets_per_switch_cpu_second);
  std::printf("%-28s %14.2f us\n", "process CPU per packet",
              1e6 * r.process_cpu_seconds / static_cast<double>(r.packets_acked));
  std::printf("%-28s %14.1f M/s\n", "values", r.values_per_second / 1e6);
  if (!flags.json_path.empty()) {
    std::ofstream out(flags.json_path);
    if (!(out << report.dump(2) << "\n")) {
      std::cerr << "bench switchd: cannot write " << flags.json_path << "\n";
      return 1;
    }
  }
  return 0;
}

}  // namespace

void AddBenchSwitchdCommand(CLI::App& bench, Runner& run) {
  auto flags = std::make_shared<BenchSwitchdFlags>();
  CLI::App* sub = bench.add_subcommand("switchd", "libra-switchd DATA throughput over loopback");
  sub->add_option("--json", flags->json_path, "write the results here");
  sub->add_option("--seconds", flags->options.seconds, "how long to run")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->add_option("--senders", flags->options.senders, "sender threads (one worker each)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  sub->add_option("--slots", flags->options.slots_per_packet, "slots per packet P")
      ->check(CLI::Range(1, 32))
      ->capture_default_str();
  sub->add_option("--window", flags->options.window, "un-ACKed packets per sender")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  sub->callback([&run, flags] { run = [flags] { return RunBenchSwitchd(*flags); }; });
}

}  // namespace libra::tool
