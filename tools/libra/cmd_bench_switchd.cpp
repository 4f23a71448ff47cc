// `libra bench switchd`: DATA packets per second through libra-switchd,
// ACKed, from several senders: over loopback with the switch in this
// process (src/bench/switchd_benchmark.h), or, with --dataplane, through
// `libra switchd` processes on veths between network namespaces, the back
// ends taking turns (src/cluster/switchd_netns_bench.h).
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "bench/push_traffic.h"
#include "bench/switchd_benchmark.h"
#include "cluster/netns_cluster.h"
#include "cluster/switchd_netns_bench.h"
#include "commands.h"

namespace libra::tool {
namespace {

struct BenchSwitchdFlags {
  switchd::SwitchdBenchmarkOptions options;
  std::string json_path;
  // Namespaces: the back ends to compare, and the traffic they get.
  std::vector<std::string> dataplanes;
  cluster::SwitchdNetnsBenchOptions netns;
  std::string traffic = "one-row";
  int workers = 8;
};

bool WriteReport(const nlohmann::json& report, const std::string& path) {
  if (path.empty()) return true;
  std::ofstream out(path);
  if (out << report.dump(2) << "\n") return true;
  std::cerr << "bench switchd: cannot write " << path << "\n";
  return false;
}

int RunBenchSwitchdNetns(const BenchSwitchdFlags& flags) {
  if (const std::string why = cluster::NetnsCluster::WhyUnavailable(); !why.empty()) {
    std::cerr << "bench switchd: " << why << "\n";
    return 1;
  }
  cluster::SwitchdNetnsBenchOptions options = flags.netns;
  options.dataplanes = flags.dataplanes;
  options.seconds = flags.options.seconds;
  options.window = flags.options.window;
  nlohmann::json report;
  try {
    if (flags.traffic == "pushes") {
      hotpath::PushTrafficOptions pushes;
      pushes.workers = flags.workers;
      pushes.slots_per_packet = flags.options.slots_per_packet;
      pushes.cells_per_array = flags.options.cells_per_array;
      hotpath::PushTraffic made = hotpath::MakePushTraffic(pushes);
      options.traffic = std::move(made.traffic);
      report["values_per_packet"] = double(made.values) / double(made.packets);
    } else {
      dataplane::ProgramBenchmarkOptions rows;
      rows.workers = flags.workers;
      rows.slots_per_packet = flags.options.slots_per_packet;
      rows.cells_per_array = flags.options.cells_per_array;
      options.traffic = dataplane::MakeRowTraffic(rows);
      report["values_per_packet"] = rows.slots_per_packet;
    }
    report.update(cluster::RunSwitchdNetnsBench(options, SelfPath()));
  } catch (const std::exception& e) {
    std::cerr << "bench switchd: " << e.what() << "\n";
    return 1;
  }
  report["traffic"] = flags.traffic;
  std::printf("switchd on veths between namespaces, %s traffic, %d slots, %d workers\n",
              flags.traffic.c_str(), flags.options.slots_per_packet, flags.workers);
  std::printf("%-8s %14s %20s %22s %14s\n", "backend", "packets/s", "per switch CPU s",
              "per softirq CPU s", "machine us/pkt");
  for (const auto& [name, b] : report["backends"].items()) {
    std::printf("%-8s %12.3f M %18.3f M %20.3f M %14.2f\n", name.c_str(),
                b["packets_per_second"].get<double>() / 1e6,
                b["packets_per_switch_cpu_second"].get<double>() / 1e6,
                b["packets_per_softirq_cpu_second"].get<double>() / 1e6,
                b["machine_cpu_us_per_packet"].get<double>());
  }
  if (report.contains("xdp_over_model_per_switch_cpu_second")) {
    std::printf("xdp / model per switch CPU second: %.2fx (per softirq CPU second %.2fx)\n",
                report["xdp_over_model_per_switch_cpu_second"].get<double>(),
                report["xdp_over_model_per_softirq_cpu_second"].get<double>());
  }
  return WriteReport(report, flags.json_path) ? 0 : 1;
}

int RunBenchSwitchd(const BenchSwitchdFlags& flags) {
  if (!flags.dataplanes.empty()) return RunBenchSwitchdNetns(flags);
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
  return WriteReport(report, flags.json_path) ? 0 : 1;
}

}  // namespace

void AddBenchSwitchdCommand(CLI::App& bench, Runner& run) {
  auto flags = std::make_shared<BenchSwitchdFlags>();
  CLI::App* sub = bench.add_subcommand(
      "switchd", "libra-switchd DATA throughput over loopback, or across namespaces (--dataplane)");
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
  sub->add_option("--dataplane", flags->dataplanes,
                  "run `libra switchd` with these back ends (model, xdp; comma-separated) on "
                  "veths between network namespaces, taking turns (needs root)")
      ->delimiter(',')
      ->check(CLI::IsMember({"model", "xdp"}));
  sub->add_option("--rounds", flags->netns.rounds, "--dataplane: rounds per back end")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  sub->add_option("--generators", flags->netns.generators,
                  "--dataplane: generator threads, each in a host namespace of its own")
      ->check(CLI::Range(1, 16))
      ->capture_default_str();
  sub->add_option("--workers", flags->workers, "--dataplane: workers of the job")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  sub->add_option("--cells", flags->options.cells_per_array, "hot cells per register array")
      ->check(CLI::Range(1, 12288))
      ->capture_default_str();
  sub->add_option("--traffic", flags->traffic,
                  "--dataplane: one-row (packet k of every worker fills row k) or pushes "
                  "(workers' sparse pushes of Zipf batches, packed as workers pack them)")
      ->check(CLI::IsMember({"one-row", "pushes"}))
      ->capture_default_str();
  sub->callback([&run, flags] { run = [flags] { return RunBenchSwitchd(*flags); }; });
}

}  // namespace libra::tool
