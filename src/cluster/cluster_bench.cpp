#include "cluster/cluster_bench.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "cluster/netns_cluster.h"
#include "cluster/speedup_bound.h"
#include "data/dataset.h"
#include "hot/hot_set.h"
#include "hot/hot_switch_layout.h"
#include "launch/launcher.h"
#include "train/job_plan.h"
#include "train/libra_options.h"
#include "train/local_switchd.h"
#include "train/model.h"
#include "train/plot_script.h"
#include "train/synthetic_data.h"
#include "train/train_job.h"
#include "train/training_hot_set.h"
#include "wire/pipeline_profile.h"

namespace libra::cluster {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::atomic<int> g_stop{0};
void OnStop(int signal) { g_stop = signal; }

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

constexpr int kRootPort = 9000;  // every node has its own namespace, so no clash
// Held-out log loss and AUC of the two runs must agree this closely.
constexpr double kQualityTolerance = 1e-4;

// The data set of a workload: made once, then reused.
std::string EnsureData(const ClusterBenchOptions& options, const Workload& w) {
  char name[128];
  std::snprintf(name, sizeof(name), "synthetic-%llu-rows-skew-%.2f.libsvm",
                static_cast<unsigned long long>(options.rows), w.skew);
  const fs::path path = fs::absolute(fs::path(options.out_dir) / name);
  if (fs::exists(path)) return path.string();
  train::SyntheticOptions synthetic;
  synthetic.rows = options.rows;
  synthetic.seed = options.seed;
  synthetic.skew = w.skew;
  std::cout << "generating " << path.string() << std::endl;
  const fs::path partial = path.string() + ".partial";
  train::SyntheticWorkload(synthetic).Write(partial.string());
  fs::rename(partial, path);
  return path.string();
}

// CPU seconds a running process has used so far (/proc/PID/stat).
double CpuSecondsOf(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14 || i == 15) ticks += std::stod(field);  // utime, stime
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

struct Job {
  train::TrainJobConfig config;
  std::string hot_set_path;  // "" : plain parameter server
  uint64_t pushes_per_worker = 0;
  std::string tag;  // file names of this run
};

// One training run on a fresh cluster. Returns its measurements, or an
// object with "error".
// The overlap U of a Libra run (speedup_bound.h): the hot values the servers
// received from the switch over the hot values one worker pushed, on average.
// None for a run without the hot path.
std::optional<double> HotOverlap(const json& report) {
  double delivered = 0, pushed = 0;
  int workers = 0;
  for (const json& node : report.value("nodes", json::array())) {
    const json hot = node.value("hot_path", json::object());
    if (!hot.value("enabled", false)) continue;
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

json RunOnCluster(const Job& job, const ClusterBenchOptions& options, const std::string& self) {
  const train::TrainJobConfig& c = job.config;
  std::vector<std::string> hosts{"scheduler"};
  for (int s = 0; s < c.servers; ++s) hosts.push_back("server" + std::to_string(s));
  for (int w = 0; w < c.workers; ++w) hosts.push_back("worker" + std::to_string(w));
  LinkShape shape;
  shape.rate_mbit = options.rate_mbit;
  shape.loss_percent = options.loss_percent;
  // The scheduler only coordinates (and sends the hot set once): its link
  // is left at full speed so that it cannot hold up either run.
  NetnsCluster cluster(hosts, shape, {0});

  std::map<std::string, std::string> common{{"DMLC_NUM_SERVER", std::to_string(c.servers)},
                                            {"DMLC_NUM_WORKER", std::to_string(c.workers)},
                                            {"DMLC_PS_ROOT_URI", cluster.host_address(0)},
                                            {"DMLC_PS_ROOT_PORT", std::to_string(kRootPort)}};
  std::unique_ptr<train::LocalSwitchd> switchd;
  if (!job.hot_set_path.empty()) {
    train::LocalSwitchdOptions where;
    where.command_prefix = NetnsCluster::ExecIn(cluster.switch_namespace());
    where.host = cluster.switch_address();
    where.echo = options.verbose;
    switchd = std::make_unique<train::LocalSwitchd>(self, where);
    train::LibraOptions libra;
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
  const int status = RunProcesses(processes, run, &usage);
  const double wall = SecondsSince(start);
  if (status == 130) g_stop = SIGINT;  // the launcher caught the interrupt

  json result{{"status", status}, {"wall_seconds", wall}};
  json cpu = json::array();
  for (const ProcessUsage& u : usage) {
    cpu.push_back(
        {{"process", u.name},
         {"cpu_seconds", u.user_seconds + u.system_seconds},
         {"cpu_share",
          u.wall_seconds > 0 ? (u.user_seconds + u.system_seconds) / u.wall_seconds : 0.0}});
  }
  if (switchd) {
    const double used = CpuSecondsOf(switchd->pid());
    cpu.push_back({{"process", "switchd"}, {"cpu_seconds", used}, {"cpu_share", used / wall}});
    switchd->Stop();
  }
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
    if (const auto overlap = HotOverlap(report)) result["hot_overlap"] = *overlap;
  } catch (const std::exception& e) {
    result["error"] = std::string("cannot read the report ") + c.json_path + ": " + e.what();
  }
  return result;
}

// Seconds until the first epoch whose held-out loss is at most `target`.
json TimeToLoss(const json& run, double target) {
  if (!run.contains("epochs")) return nullptr;
  for (const json& e : run["epochs"]) {
    if (e.at("test_log_loss").get<double>() <= target) return e.at("at_seconds");
  }
  return nullptr;
}

// Bytes through the links of the servers, summed.
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

void PrintHeader() {
  std::printf("\n%-12s %-6s %2s %2s | %9s %9s %7s %6s %6s %6s | %15s %15s | %9s | %5s\n",
              "workload", "model", "N", "M", "plain/s", "libra/s", "speedup", "bound", "ratio",
              "U-bnd", "srv in MB p->l", "srv out MB p->l", "cpu p/l", "qual=");
}

void PrintRow(const json& r) {
  auto number = [](const json& j, const char* key) {
    return j.contains(key) && j[key].is_number() ? j[key].get<double>() : NAN;
  };
  const json& plain = r["plain"];
  const json& libra = r["libra"];
  const auto [pin, pout] = ServerLinkBytes(plain);
  const auto [lin, lout] = ServerLinkBytes(libra);
  char in[32], out[32], cpu[32];
  std::snprintf(in, sizeof(in), "%.1f->%.1f", pin / 1e6, lin / 1e6);
  std::snprintf(out, sizeof(out), "%.1f->%.1f", pout / 1e6, lout / 1e6);
  std::snprintf(cpu, sizeof(cpu), "%.2f/%.2f", TotalCpuShare(plain), TotalCpuShare(libra));
  const json& overlap_bound = r.value("bound_with_overlap", json::object());
  std::printf("%-12s %-6s %2d %2d | %9.0f %9.0f %7.2f %6.2f %6.2f %6.2f | %15s %15s | %9s | %5s\n",
              r["workload"].get<std::string>().c_str(), r["model"].get<std::string>().c_str(),
              r["workers"].get<int>(), r["servers"].get<int>(), number(plain, "samples_per_second"),
              number(libra, "samples_per_second"), number(r, "speedup"),
              number(r["bound"], "speedup"), number(r, "speedup_over_bound"),
              number(overlap_bound, "speedup"), in, out, cpu,
              r.value("same_quality", false) ? "yes" : "NO");
  std::fflush(stdout);
}

void WriteJson(const json& report, const fs::path& path) {
  const fs::path partial = path.string() + ".partial";
  {
    std::ofstream out(partial);
    out << report.dump(2) << "\n";
  }
  fs::rename(partial, path);
}

}  // namespace

std::vector<Workload> DefaultWorkloads() {
  return {{"paper-30k", 0.85, 30000, 0},  {"paper-full", 0.85, 0, 0},
          {"skewed-full", 1.3, 0, 0},     {"paper-paying", 0.85, 0, 0.5},
          {"skewed-paying", 1.3, 0, 0.5}, {"steep-full", 1.6, 0, 0},
          {"steep-paying", 1.6, 0, 0.5}};
}

int RunClusterBench(const ClusterBenchOptions& options, const std::string& self) {
  if (!NetnsCluster::HaveRoot()) {
    std::cerr << "libra bench cluster: needs root, to create network namespaces and shape links "
                 "with tc; run it as root (for example with sudo)\n";
    return 2;
  }
  std::vector<Workload> workloads;
  for (const std::string& name : options.workloads) {
    bool found = false;
    for (const Workload& w : DefaultWorkloads()) {
      if (w.name == name) workloads.push_back(w), found = true;
    }
    if (!found) {
      std::cerr << "libra bench cluster: --workloads: unknown workload '" << name << "'\n";
      return 2;
    }
  }
  try {
    RunOrThrow({"tc", "-V"});
    RunOrThrow({"ip", "-V"});
    if (options.loss_percent > 0) RunOrThrow({"nft", "--version"});
  } catch (const std::exception& e) {
    std::cerr << "libra bench cluster: " << e.what() << " (install iproute2 and nftables)\n";
    return 2;
  }
  NetnsCluster::RemoveStale();
  fs::create_directories(options.out_dir);
  const fs::path report_path = fs::path(options.out_dir) / "cluster-report.json";

  struct sigaction action {};
  action.sa_handler = OnStop;
  struct sigaction old_int, old_term;
  sigaction(SIGINT, &action, &old_int);
  sigaction(SIGTERM, &action, &old_term);
  g_stop = 0;

  json report{{"options",
               {{"rows", options.rows},
                {"batch", options.batch},
                {"epochs", options.epochs},
                {"rate_mbit", options.rate_mbit},
                {"loss_percent", options.loss_percent},
                {"seed", options.seed},
                {"cores", sysconf(_SC_NPROCESSORS_ONLN)}}},
              {"configurations", json::array()}};
  int failures = 0;
  const auto bench_start = Clock::now();
  PrintHeader();
  for (const Workload& w : workloads) {
    if (g_stop) break;
    std::string data_path;
    train::Dataset data;
    try {
      data_path = EnsureData(options, w);
      data = train::ReadDataset(data_path);
    } catch (const std::exception& e) {
      std::cerr << "libra bench cluster: " << e.what() << "\n";
      return 1;
    }
    for (const std::string& model_name : options.models) {
      for (int n : options.workers) {
        if (g_stop) break;
        train::TrainJobConfig config;
        config.data_path = data_path;
        config.model.kind = model_name == "deepfm" ? train::ModelKind::kDeepFm
                            : model_name == "fm"   ? train::ModelKind::kFactorizationMachine
                                                   : train::ModelKind::kLogisticRegression;
        config.model.num_fields = data.num_fields;
        config.model.seed = options.seed;
        config.epochs = options.epochs;
        config.batch = options.batch;
        config.workers = n;
        config.print_summary = false;
        config.progress_interval_s = 0;
        const train::JobPlan plan =
            train::JobPlan::Make(data.rows(), config.test_fraction, n, config.batch);
        const auto model = train::CreateModel(config.model);

        // The hot set of this job, chosen offline as `libra demo` does.
        train::TrainingHotSetOptions hot;
        hot.capacity_cells =
            w.hot_keys > 0
                ? w.hot_keys * model->value_length()
                : hot::SwitchLayoutFor(dataplane::PipelineProfile::Tofino1(), n).capacity();
        hot.workers = static_cast<uint32_t>(n);
        hot.batch = config.batch;
        hot.seed = options.seed;
        hot.min_pushes_per_epoch = w.min_worker_share * n;
        const train::TrainingHotSet found =
            train::FindTrainingHotSet(train::SliceRows(data, 0, plan.train_rows), *model, hot);
        const std::string tag = w.name + "-" + model_name + "-w" + std::to_string(n);
        const std::string hot_set_path =
            fs::absolute(fs::path(options.out_dir) / ("hot-set-" + tag + ".bin")).string();
        hot::WriteHotSetFile(found.hot_set, hot_set_path);

        for (int m : options.servers) {
          if (g_stop) break;
          config.servers = m;
          const std::string run_tag = tag + "-s" + std::to_string(m);
          Job job{config, "", plan.iterations_per_epoch * config.epochs, run_tag + "-plain"};
          job.config.json_path =
              fs::absolute(fs::path(options.out_dir) / (job.tag + ".json")).string();
          json r{{"workload", w.name},
                 {"skew", w.skew},
                 {"model", model_name},
                 {"workers", n},
                 {"servers", m},
                 {"hot_keys", found.hot_set.size()},
                 {"hot_values", found.hot_set.num_values()},
                 {"hot_share", found.hot_update_share()}};
          const SpeedupBound bound = PredictSpeedup(n, m, found.hot_update_share());
          r["bound"] = {{"plain_link_units", bound.plain_link_units},
                        {"libra_link_units", bound.libra_link_units},
                        {"speedup", bound.speedup}};
          try {
            r["plain"] = RunOnCluster(job, options, self);
            if (g_stop) break;
            job.hot_set_path = hot_set_path;
            job.tag = run_tag + "-libra";
            job.config.json_path =
                fs::absolute(fs::path(options.out_dir) / (job.tag + ".json")).string();
            r["libra"] = RunOnCluster(job, options, self);
          } catch (const std::exception& e) {
            r["error"] = e.what();
          }
          const json& plain = r.value("plain", json::object());
          const json& libra = r.value("libra", json::object());
          if (plain.contains("samples_per_second") && libra.contains("samples_per_second")) {
            const double speedup = libra["samples_per_second"].get<double>() /
                                   plain["samples_per_second"].get<double>();
            r["speedup"] = speedup;
            r["speedup_over_bound"] = speedup / bound.speedup;
            if (libra.contains("hot_overlap")) {
              const double overlap = libra["hot_overlap"].get<double>();
              const SpeedupBound with_overlap =
                  PredictSpeedup(n, m, found.hot_update_share(), overlap);
              r["bound_with_overlap"] = {{"overlap", overlap},
                                         {"libra_link_units", with_overlap.libra_link_units},
                                         {"speedup", with_overlap.speedup}};
            }
            // The switch sums in fixed point (2^-F per value), so the models
            // agree to that precision rather than bit for bit.
            const double loss_gap = std::abs(plain["final"]["test_log_loss"].get<double>() -
                                             libra["final"]["test_log_loss"].get<double>());
            const double auc_gap = std::abs(plain["final"]["test_auc"].get<double>() -
                                            libra["final"]["test_auc"].get<double>());
            r["test_log_loss_gap"] = loss_gap;
            r["test_auc_gap"] = auc_gap;
            r["same_quality"] = loss_gap <= kQualityTolerance && auc_gap <= kQualityTolerance;
            const double target =
                options.target_loss > 0
                    ? options.target_loss
                    : plain["final"]["test_log_loss"].get<double>() + kQualityTolerance;
            r["target_loss"] = target;
            r["plain_seconds_to_target"] = TimeToLoss(plain, target);
            r["libra_seconds_to_target"] = TimeToLoss(libra, target);
            PrintRow(r);
          } else {
            ++failures;
            std::printf("%-12s %-6s %2d %2d | failed: %s\n", w.name.c_str(), model_name.c_str(), n,
                        m,
                        r.contains("error")       ? r["error"].dump().c_str()
                        : plain.contains("error") ? plain["error"].dump().c_str()
                        : libra.contains("error") ? libra["error"].dump().c_str()
                                                  : "interrupted");
          }
          report["configurations"].push_back(r);
          report["seconds"] = SecondsSince(bench_start);
          WriteJson(report, report_path);
        }
      }
    }
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  report["figures"] = train::RunPlotScript(LIBRA_CLUSTER_PLOT_SCRIPT, report_path.string(),
                                           options.out_dir, {"speedup.png", "server_bytes.png"});
  WriteJson(report, report_path);
  std::cout << "\nreport: " << report_path.string() << "\n";
  for (const auto& figure : report["figures"])
    std::cout << "figure: " << figure.get<std::string>() << "\n";
  if (g_stop) {
    std::cerr << "libra bench cluster: interrupted; the namespaces are removed\n";
    return 130;
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace libra::cluster
