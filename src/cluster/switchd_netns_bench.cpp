#include "cluster/switchd_netns_bench.h"

#include <unistd.h>

#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "bench/traffic_replay.h"
#include "cluster/bpf_run_time.h"
#include "cluster/netns_cluster.h"
#include "hotpath/controller/switch_control_client.h"
#include "launch/launcher.h"
#include "train/local_switchd.h"

namespace libra::cluster {
namespace {

using nlohmann::json;

constexpr const char* kPrefix = "librabench";

// Softirq and busy (not idle, not iowait) seconds of all CPUs so far.
struct CpuTimes {
  double softirq = 0;
  double busy = 0;
};

CpuTimes ReadCpuTimes() {
  std::ifstream in("/proc/stat");
  std::string name;
  CpuTimes t;
  if (!(in >> name) || name != "cpu") return t;
  // user nice system idle iowait irq softirq steal
  double v[8] = {};
  for (double& x : v) in >> x;
  const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  t.softirq = v[6] / tick;
  t.busy = (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / tick;
  return t;
}

// The id of the XDP program on `device` in namespace `ns`.
std::uint32_t XdpProgramId(const std::string& ns, const std::string& device) {
  const json link =
      json::parse(RunOrThrow({"ip", "-n", ns, "-j", "link", "show", "dev", device})).at(0);
  const json xdp = link.value("xdp", json::object());
  if (xdp.contains("prog")) return xdp["prog"].at("id").get<std::uint32_t>();
  for (const json& a : xdp.value("attached", json::array())) {
    if (a.contains("prog")) return a["prog"].at("id").get<std::uint32_t>();
  }
  throw std::runtime_error("no XDP program on " + device + " in " + ns);
}

std::string HostName(int g) { return "gen" + std::to_string(g); }

double Ratio(double a, double b) { return b > 0 ? a / b : 0.0; }

}  // namespace

json RunSwitchdNetnsBench(const SwitchdNetnsBenchOptions& options, const std::string& self) {
  const dataplane::BenchTraffic& traffic = options.traffic;
  if (options.dataplanes.empty() || options.rounds < 1 || options.generators < 1 ||
      options.generators > traffic.workers) {
    throw std::invalid_argument(
        "bench switchd: a back end, a round and 1 to `workers` generators are needed");
  }
  bool any_xdp = false;
  for (const std::string& d : options.dataplanes) {
    if (d != "model" && d != "xdp") throw std::invalid_argument("unknown back end '" + d + "'");
    any_xdp |= d == "xdp";
  }
  NetnsCluster::RemoveStale(kPrefix);
  std::vector<std::string> hosts;
  for (int g = 0; g < options.generators; ++g) hosts.push_back(HostName(g));
  LinkShape shape;
  shape.rate_mbit = 0;      // veth speed: the switch is what is measured
  shape.xdp_switch = true;  // the same links for both back ends
  NetnsCluster cluster(hosts, shape, {}, kPrefix);

  std::unique_ptr<BpfRunTimeStats> stats;
  if (any_xdp) {
    stats = std::make_unique<BpfRunTimeStats>();
    if (!stats->enabled()) throw std::runtime_error(stats->error());
  }

  // Worker w sends from generator host w % generators, on a port of its own.
  std::vector<std::unique_ptr<net::UdpSocket>> sockets(traffic.workers);
  SwitchJob job;
  job.job_id = traffic.job_id;
  job.token = "bench";
  job.cells_per_array = traffic.cells_per_array;
  job.scale_bits = traffic.scale_bits;
  job.slots_per_packet = traffic.slots_per_packet;
  job.servers.push_back({0x0a4d00fe, 9});  // 10.77.0.254: nobody; no READY is asked for
  for (int g = 0; g < options.generators; ++g) {
    const auto address = UdpEndpoint::Parse(cluster.host_address(g) + ":0");
    NetnsCluster::RunIn(cluster.host_namespace(g), [&] {
      for (int w = g; w < traffic.workers; w += options.generators) {
        sockets[w] = std::make_unique<net::UdpSocket>(*address);
      }
    });
  }
  std::vector<net::UdpSocket*> worker_sockets;
  for (auto& s : sockets) {
    job.workers.push_back(s->local());
    worker_sockets.push_back(s.get());
  }

  bench::ReplayOptions replay;
  replay.window = options.window;
  replay.threads = options.generators;
  replay.seconds = options.seconds;

  json rounds = json::array();
  std::map<std::string, json> totals;
  for (int r = 0; r < options.rounds; ++r) {
    for (const std::string& dataplane : options.dataplanes) {
      train::LocalSwitchdOptions where;
      where.command_prefix = NetnsCluster::ExecIn(cluster.switch_namespace());
      where.host = cluster.switch_address();
      where.echo = false;
      where.flags = {"--dataplane", dataplane};
      if (dataplane == "xdp") {
        for (size_t i = 0; i < hosts.size(); ++i) {
          where.flags.insert(where.flags.end(), {"--interface", NetnsCluster::switch_port(i)});
        }
      }
      train::LocalSwitchd switchd(self, where);
      if (switchd.dataplane() != dataplane) {
        throw std::runtime_error("switchd runs " + switchd.dataplane() + ", not " + dataplane);
      }
      // The control client talks from a generator host's namespace, where
      // the switch's address is (its ZeroMQ I/O thread starts on the first
      // request and stays there).
      hotpath::SwitchControlClient control(switchd.control_address());
      NetnsCluster::RunIn(cluster.host_namespace(0), [&] { control.InstallJob(job); });
      const auto to = UdpEndpoint::Parse(switchd.data_address());
      const std::uint32_t program =
          dataplane == "xdp" ? XdpProgramId(cluster.switch_namespace(), "p0") : 0;
      const BpfRunTime run_before = program ? BpfRunTimeStats::Of(program) : BpfRunTime{};
      const CpuTimes cpu_before = ReadCpuTimes();
      const double process_before = CpuSecondsOf(switchd.pid());

      const bench::ReplayTotals sent = bench::ReplayTraffic(traffic, worker_sockets, *to, replay);

      const double process_cpu = CpuSecondsOf(switchd.pid()) - process_before;
      const CpuTimes cpu_after = ReadCpuTimes();
      const BpfRunTime run_after = program ? BpfRunTimeStats::Of(program) : BpfRunTime{};
      json counters;
      NetnsCluster::RunIn(cluster.host_namespace(0), [&] { counters = control.Counters(); });
      switchd.Stop();
      if (sent.stalled) {
        throw std::runtime_error("bench switchd: no ACKs from the " + dataplane +
                                 " switch for 2 s");
      }

      const double program_seconds = 1e-9 * double(run_after.run_time_ns - run_before.run_time_ns);
      const double switch_cpu = dataplane == "xdp" ? program_seconds : process_cpu;
      const double softirq = cpu_after.softirq - cpu_before.softirq;
      json round = {
          {"round", r},
          {"dataplane", dataplane},
          {"seconds", sent.seconds},
          {"epochs", sent.epochs},
          {"packets_acked", sent.packets_acked},
          {"packets_sent", sent.packets_sent},
          {"switch_data_packets", counters["events"].value("data_packets", std::uint64_t{0})},
          {"switch_cpu_seconds", switch_cpu},
          {"switchd_process_cpu_seconds", process_cpu},
          {"softirq_cpu_seconds", softirq},
          {"machine_busy_cpu_seconds", cpu_after.busy - cpu_before.busy},
          {"packets_per_second", Ratio(double(sent.packets_acked), sent.seconds)},
          {"packets_per_switch_cpu_second", Ratio(double(sent.packets_acked), switch_cpu)},
          {"packets_per_softirq_cpu_second", Ratio(double(sent.packets_acked), softirq)}};
      if (program) {
        round["program_runs"] = run_after.run_count - run_before.run_count;
        round["program_ns_per_run"] = Ratio(double(run_after.run_time_ns - run_before.run_time_ns),
                                            double(run_after.run_count - run_before.run_count));
      }
      rounds.push_back(round);
      json& t = totals.try_emplace(dataplane, json::object()).first->second;
      for (const char* key : {"seconds", "switch_cpu_seconds", "switchd_process_cpu_seconds",
                              "softirq_cpu_seconds", "machine_busy_cpu_seconds"}) {
        t[key] = t.value(key, 0.0) + round[key].get<double>();
      }
      for (const char* key : {"packets_acked", "packets_sent", "switch_data_packets"}) {
        t[key] = t.value(key, std::uint64_t{0}) + round[key].get<std::uint64_t>();
      }
      if (program) {
        t["program_runs"] =
            t.value("program_runs", std::uint64_t{0}) + round["program_runs"].get<std::uint64_t>();
      }
    }
  }

  json backends = json::object();
  for (auto& [dataplane, t] : totals) {
    const double packets = t["packets_acked"].get<double>();
    t["packets_per_second"] = Ratio(packets, t["seconds"].get<double>());
    t["packets_per_switch_cpu_second"] = Ratio(packets, t["switch_cpu_seconds"].get<double>());
    t["packets_per_softirq_cpu_second"] = Ratio(packets, t["softirq_cpu_seconds"].get<double>());
    t["machine_cpu_us_per_packet"] =
        Ratio(1e6 * t["machine_busy_cpu_seconds"].get<double>(), packets);
    t["switch_cpu_source"] =
        dataplane == "xdp"
            ? "bpf_prog_info.run_time_ns of the XDP program (BPF_ENABLE_STATS): its own runs, "
              "without veth's receive and XDP_TX"
            : "user + system time of the switchd process (/proc/PID/stat)";
    backends[dataplane] = t;
  }
  json report = {{"benchmark", "switchd"},
                 {"network", "veths between network namespaces"},
                 {"workers", traffic.workers},
                 {"slots_per_packet", traffic.slots_per_packet},
                 {"cells_per_array", traffic.cells_per_array},
                 {"generators", options.generators},
                 {"window", options.window},
                 {"rounds_per_backend", options.rounds},
                 {"hardware_threads", std::thread::hardware_concurrency()},
                 {"rounds", rounds},
                 {"backends", backends},
                 {"target_xdp_over_model_per_switch_cpu_second", 3.0},
                 {"target_xdp_packets_per_switch_cpu_second", 5e6}};
  if (backends.contains("xdp") && backends.contains("model")) {
    report["xdp_over_model_per_switch_cpu_second"] =
        Ratio(backends["xdp"]["packets_per_switch_cpu_second"].get<double>(),
              backends["model"]["packets_per_switch_cpu_second"].get<double>());
    report["xdp_over_model_per_softirq_cpu_second"] =
        Ratio(backends["xdp"]["packets_per_softirq_cpu_second"].get<double>(),
              backends["model"]["packets_per_softirq_cpu_second"].get<double>());
    report["xdp_over_model_packets_per_second"] =
        Ratio(backends["xdp"]["packets_per_second"].get<double>(),
              backends["model"]["packets_per_second"].get<double>());
  }
  return report;
}

}  // namespace libra::cluster
