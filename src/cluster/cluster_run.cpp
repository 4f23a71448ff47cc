#include "cluster/cluster_run.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "cluster/netns_cluster.h"
#include "cluster/speedup_bound.h"
#include "hot/median.h"
#include "launch/launcher.h"
#include "train/libra_options.h"
#include "train/local_switchd.h"

namespace libra::cluster {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr int kRootPort = 9000;  // every node has its own namespace, so no clash

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The switch's counters (`libra switchd-stats`, run in the switch's
// namespace, where its control port is), or the reason they are missing.
json SwitchCounters(const NetnsCluster& cluster, const std::string& self,
                    const std::string& control) {
  std::vector<std::string> argv = NetnsCluster::ExecIn(cluster.switch_namespace());
  argv.insert(argv.end(), {self, "switchd-stats", control});
  try {
    json counters = json::parse(RunOrThrow(argv));
    counters.erase("ok");
    return counters;
  } catch (const std::exception& e) {
    return {{"error", e.what()}};
  }
}

}  // namespace

std::optional<double> HotOverlap(const json& report) {
  double delivered = 0, pushed = 0;
  int workers = 0;
  for (const json& node : report.value("nodes", json::array())) {
    const json hot = node.value("hot_path", json::object());
    if (!hot.value("enabled", false) || !hot.value("active", true)) continue;
    if (node.value("role", "") == "server") {
      delivered += hot.at("collector").at("written_values").get<double>();
    } else if (node.value("role", "") == "worker" && hot.contains("hot_values_pushed")) {
      pushed += hot.at("hot_values_pushed").get<double>();  // (only worker 0 reports it)
      ++workers;
    }
  }
  const int all_workers = report.at("config").at("workers").get<int>();
  if (workers == 0 || pushed == 0) return std::nullopt;
  return std::clamp(delivered / (pushed / workers), 1.0, double(all_workers));
}

json RunOnCluster(const ClusterJob& job, const ClusterRunOptions& options,
                  const std::string& self) {
  const train::TrainJobConfig& c = job.config;
  std::vector<std::string> hosts{"scheduler"};
  for (int s = 0; s < c.servers; ++s) hosts.push_back("server" + std::to_string(s));
  for (int w = 0; w < c.workers; ++w) hosts.push_back("worker" + std::to_string(w));
  LinkShape shape;
  shape.rate_mbit = options.rate_mbit;
  shape.loss_percent = options.loss_percent;
  shape.host_band = options.host_band;
  shape.port_band = options.port_band;
  shape.xdp_switch = options.dataplane == "xdp";
  // The scheduler only coordinates (and sends the hot set once): its link
  // is left at full speed so that it cannot hold up either run.
  NetnsCluster cluster(hosts, shape, {0});

  std::map<std::string, std::string> common{{"DMLC_NUM_SERVER", std::to_string(c.servers)},
                                            {"DMLC_NUM_WORKER", std::to_string(c.workers)},
                                            {"DMLC_PS_ROOT_URI", cluster.host_address(0)},
                                            {"DMLC_PS_ROOT_PORT", std::to_string(kRootPort)}};
  // The loss rule drops at the hosts' netfilter output hook, which sees a
  // segmented send as one packet: there, datagrams leave one by one, so that
  // each is lost on its own, as on a wire.
  if (options.loss_percent > 0) common["LIBRA_UDP_SEGMENTATION"] = "0";
  std::unique_ptr<train::LocalSwitchd> switchd;
  train::LocalSwitchdOptions where;
  if (!job.hot_set_path.empty() || job.sample) {
    where.command_prefix = NetnsCluster::ExecIn(cluster.switch_namespace());
    where.host = cluster.switch_address();
    where.echo = options.verbose;
    where.flags = {"--dataplane", options.dataplane};
    if (options.dataplane == "xdp") {
      for (size_t i = 0; i < hosts.size(); ++i) {
        where.flags.insert(where.flags.end(), {"--interface", NetnsCluster::switch_port(i)});
      }
    }
    const std::vector<std::string> plain_flags = where.flags;
    where.flags.insert(where.flags.end(), options.switchd_flags.begin(),
                       options.switchd_flags.end());
    switchd = std::make_unique<train::LocalSwitchd>(self, where);
    // A switch started again takes the same ports and no failure injection.
    where.flags = plain_flags;
    where.data_port =
        std::stoi(switchd->data_address().substr(switchd->data_address().rfind(':') + 1));
    where.control_port =
        std::stoi(switchd->control_address().substr(switchd->control_address().rfind(':') + 1));
    train::LibraOptions libra = c.libra;
    libra.hot_set_path = job.hot_set_path;
    for (const auto& [k, v] : train::LibraEnvironment(
             libra, switchd->data_address(), switchd->control_address(), job.pushes_per_worker)) {
      common[k] = v;
    }
  }
  const std::vector<std::string> node = train::TrainNodeCommand(self, c);
  std::vector<ProcessSpec> processes;
  for (size_t i = 0; i < hosts.size(); ++i) {
    ProcessSpec p;
    p.name = hosts[i];
    p.argv = NetnsCluster::ExecIn(cluster.host_namespace(i));
    p.argv.insert(p.argv.end(), node.begin(), node.end());
    p.env = common;
    p.env["DMLC_NODE_HOST"] = cluster.host_address(i);
    const bool server = hosts[i].starts_with("server");
    p.env["DMLC_ROLE"] = i == 0 ? "scheduler" : server ? "server" : "worker";
    if (i > 0) p.env["LIBRA_RANK"] = hosts[i].substr(6);  // after "server"/"worker"
    processes.push_back(std::move(p));
  }

  std::vector<LinkCounters> before;
  for (size_t i = 0; i < hosts.size(); ++i) before.push_back(cluster.Counters(i));
  std::ofstream log(fs::path(options.out_dir) / (job.tag + ".log"));
  RunOptions run;
  run.timeout_s = options.run_timeout_s;
  run.output = options.verbose ? &std::cout : &log;
  std::vector<ProcessUsage> usage;
  const auto start = Clock::now();
  // Watches the switch while the job runs, and starts it again if it ends.
  // The thread lives until the switch is stopped: a switch it started dies
  // with it (PR_SET_PDEATHSIG is per thread).
  std::mutex switch_mutex;
  std::atomic<bool> job_done{false}, switch_stopped{false};
  int restarts = 0;
  std::string restart_error;
  std::thread watcher;
  if (switchd && options.restart_switch) {
    watcher = std::thread([&] {
      while (!switch_stopped.load()) {
        {
          std::lock_guard<std::mutex> lock(switch_mutex);
          if (!job_done.load() && restart_error.empty() && switchd->Exited()) {
            try {
              switchd = std::make_unique<train::LocalSwitchd>(self, where);
              ++restarts;
            } catch (const std::exception& e) {
              restart_error = e.what();
            }
          }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      std::lock_guard<std::mutex> lock(switch_mutex);
      switchd.reset();
    });
  }
  const int status = RunProcesses(processes, run, &usage);
  const double wall = SecondsSince(start);
  job_done = true;
  std::unique_lock<std::mutex> switch_lock(switch_mutex);

  json result{
      {"status", status}, {"wall_seconds", wall}, {"switch_namespace", cluster.switch_namespace()}};
  if (switchd) {
    result["dataplane"] = switchd->dataplane();
    result["switch_restarts"] = restarts;
    if (!restart_error.empty()) result["switch_restart_error"] = restart_error;
  }
  json cpu = json::array();
  for (const ProcessUsage& u : usage) {
    cpu.push_back(
        {{"process", u.name},
         {"cpu_seconds", u.user_seconds + u.system_seconds},
         {"cpu_share",
          u.wall_seconds > 0 ? (u.user_seconds + u.system_seconds) / u.wall_seconds : 0.0}});
  }
  if (switchd) {
    result["switch"] = SwitchCounters(cluster, self, switchd->control_address());
    const double used = CpuSecondsOf(switchd->pid());
    cpu.push_back({{"process", "switchd"}, {"cpu_seconds", used}, {"cpu_share", used / wall}});
    switchd->Stop();
  }
  switch_lock.unlock();
  switch_stopped = true;
  if (watcher.joinable()) watcher.join();
  result["cpu"] = cpu;
  json links = json::array();
  for (size_t i = 0; i < hosts.size(); ++i) {
    const LinkCounters after = cluster.Counters(i);
    links.push_back({{"host", hosts[i]},
                     {"bytes_out", after.bytes_from_host - before[i].bytes_from_host},
                     {"bytes_in", after.bytes_to_host - before[i].bytes_to_host},
                     {"shaper_drops_out", after.drops_from_host - before[i].drops_from_host},
                     {"shaper_drops_in", after.drops_to_host - before[i].drops_to_host}});
  }
  result["links"] = links;
  if (status != 0) {
    result["error"] = "the job exited with status " + std::to_string(status) + "; see " +
                      (fs::path(options.out_dir) / (job.tag + ".log")).string();
    return result;
  }
  try {
    std::ifstream in(c.json_path);
    const json report = json::parse(in);
    double train_seconds = 0;
    for (const json& e : report.at("epochs")) train_seconds += e.at("seconds").get<double>();
    const double rows = report.at("data").at("train_rows").get<double>() * c.epochs;
    result["train_seconds"] = train_seconds;
    result["samples_per_second"] = rows / train_seconds;
    result["epochs_per_second"] = c.epochs / train_seconds;
    result["epochs"] = report.at("epochs");
    result["final"] = report.at("final");
    result["model_fingerprint"] = report.at("model_fingerprint");
    const json iterations = report.value("iterations", json::object());
    if (iterations.contains("each_ms")) result["iteration_ms"] = iterations["each_ms"];
    if (const auto overlap = HotOverlap(report)) result["hot_overlap"] = *overlap;
  } catch (const std::exception& e) {
    result["error"] = std::string("cannot read the report ") + c.json_path + ": " + e.what();
  }
  return result;
}

std::optional<double> SteadySpeedup(const json& plain, const json& libra) {
  const json none = json::array();
  const json& p = plain.contains("iteration_ms") ? plain["iteration_ms"] : none;
  const json& l = libra.contains("iteration_ms") ? libra["iteration_ms"] : none;
  // Both ran the same iterations, each of the same rows: their times'
  // ratio is their throughputs' (at least two, to leave one out).
  if (p.size() != l.size() || p.size() < 2) return std::nullopt;
  double plain_ms = 0, libra_ms = 0;
  for (size_t i = 1; i < p.size(); ++i) {
    plain_ms += p[i].get<double>();
    libra_ms += l[i].get<double>();
  }
  if (!(plain_ms > 0) || !(libra_ms > 0)) return std::nullopt;
  return plain_ms / libra_ms;
}

json TimeToLoss(const json& run, double target) {
  if (!run.contains("epochs")) return nullptr;
  for (const json& e : run["epochs"]) {
    if (e.at("test_log_loss").get<double>() <= target) return e.at("at_seconds");
  }
  return nullptr;
}

std::pair<double, double> ServerLinkBytes(const json& run) {
  double in = 0, out = 0;
  for (const json& l : run.value("links", json::array())) {
    if (!l.at("host").get<std::string>().starts_with("server")) continue;
    in += l.at("bytes_in").get<double>();
    out += l.at("bytes_out").get<double>();
  }
  return {in, out};
}

double TotalCpuShare(const json& run) {
  double cpu = 0;
  for (const json& p : run.value("cpu", json::array())) cpu += p.at("cpu_seconds").get<double>();
  const double wall = run.value("wall_seconds", 0.0);
  return wall > 0 ? cpu / wall : 0;
}

void CompareRuns(int workers, int servers, double hot_share, double target_loss, json& pair) {
  const json& plain = pair.at("plain");
  const json& libra = pair.at("libra");
  const SpeedupBound bound = PredictSpeedup(workers, servers, hot_share);
  pair["bound"] = {{"plain_link_units", bound.plain_link_units},
                   {"libra_link_units", bound.libra_link_units},
                   {"speedup", bound.speedup}};
  const double speedup =
      libra.at("samples_per_second").get<double>() / plain.at("samples_per_second").get<double>();
  pair["speedup"] = speedup;
  pair["speedup_over_bound"] = speedup / bound.speedup;
  if (libra.contains("hot_overlap")) {
    const double overlap = libra["hot_overlap"].get<double>();
    const SpeedupBound with_overlap = PredictSpeedup(workers, servers, hot_share, overlap);
    pair["bound_with_overlap"] = {{"overlap", overlap},
                                  {"libra_link_units", with_overlap.libra_link_units},
                                  {"speedup", with_overlap.speedup}};
  }
  if (const auto steady = SteadySpeedup(plain, libra)) {
    pair["steady_speedup"] = *steady;
    const double bound_speedup = pair.contains("bound_with_overlap")
                                     ? pair["bound_with_overlap"]["speedup"].get<double>()
                                     : bound.speedup;
    pair["steady_over_bound"] = *steady / bound_speedup;
  }
  const double plain_loss = plain.at("final").at("test_log_loss").get<double>();
  const double loss_gap = std::abs(plain_loss - libra["final"]["test_log_loss"].get<double>());
  const double auc_gap =
      std::abs(plain["final"]["test_auc"].get<double>() - libra["final"]["test_auc"].get<double>());
  pair["test_log_loss_gap"] = loss_gap;
  pair["test_auc_gap"] = auc_gap;
  pair["same_quality"] = loss_gap <= kQualityTolerance && auc_gap <= kQualityTolerance;
  const double target = target_loss > 0 ? target_loss : plain_loss + kQualityTolerance;
  pair["target_loss"] = target;
  pair["plain_seconds_to_target"] = TimeToLoss(plain, target);
  pair["libra_seconds_to_target"] = TimeToLoss(libra, target);
}

json RoundOf(const json& pair) {
  json round{{"plain_samples_per_second", pair.at("plain").at("samples_per_second")},
             {"libra_samples_per_second", pair.at("libra").at("samples_per_second")},
             {"speedup", pair.at("speedup")}};
  if (pair.contains("steady_speedup")) round["steady_speedup"] = pair["steady_speedup"];
  return round;
}

json SummariseRounds(const json& rounds) {
  json summary = json::object();
  for (const char* figure : {"speedup", "steady_speedup"}) {
    std::vector<double> values;
    for (const json& round : rounds) {
      if (round.contains(figure)) values.push_back(round[figure].get<double>());
    }
    if (values.empty()) continue;
    const auto [low, high] = std::minmax_element(values.begin(), values.end());
    summary[figure] = {{"median", hot::UpperMedian(values)}, {"min", *low}, {"max", *high}};
  }
  summary["rounds"] = rounds.size();
  return summary;
}

}  // namespace libra::cluster
