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
#include <thread>

#include "cluster/cluster_run.h"
#include "cluster/netns_cluster.h"
#include "data/dataset.h"
#include "hot/cost_model.h"
#include "hot/hot_set.h"
#include "hot/hot_switch_layout.h"
#include "train/job_plan.h"
#include "train/libra_options.h"
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

// The links every run of the table takes, said once above it: how the hot
// path's packets meet the cold traffic in the queues decides much of a
// speedup on loaded links (docs/PERFORMANCE.md, "Emulated cluster").
void PrintLinks(const ClusterBenchOptions& options) {
  const auto queue = [](bool band) { return band ? "the hot path's packets first" : "one FIFO"; };
  std::printf(
      "links: each host's shaped both ways, %g ms queues; hosts' queues: %s; switch ports: %s\n",
      LinkShape{}.queue_ms, queue(options.host_band), queue(options.port_band));
}

void PrintHeader() {
  std::printf(
      "\n%-12s %-6s %2s %2s %6s | %9s %9s %7s %6s %6s %6s %6s | %15s %15s | %9s | %5s | %s\n",
      "workload", "model", "N", "M", "Mbit/s", "plain/s", "libra/s", "speedup", "bound", "ratio",
      "U-bnd", "steady", "srv in MB p->l", "srv out MB p->l", "cpu p/l", "qual=", "hot keys");
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
  std::printf(
      "%-12s %-6s %2d %2d %6g | %9.0f %9.0f %7.2f %6.2f %6.2f %6.2f %6.2f | %15s %15s | %9s | %5s "
      "| %s\n",
      r["workload"].get<std::string>().c_str(), r["model"].get<std::string>().c_str(),
      r["workers"].get<int>(), r["servers"].get<int>(), r["rate_mbit"].get<double>(),
      number(plain, "samples_per_second"), number(libra, "samples_per_second"),
      number(r, "speedup"), number(r["bound"], "speedup"), number(r, "speedup_over_bound"),
      number(overlap_bound, "speedup"), number(r, "steady_speedup"), in, out, cpu,
      r.value("same_quality", false) ? "yes" : "NO",
      r["hot_keys"].get<uint64_t>() > 0 ? std::to_string(r["hot_keys"].get<uint64_t>()).c_str()
                                        : "0 (cost model: plain)");
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

// One more round of a configuration whose first round ran: its plain run
// and its Libra run with the hot set already chosen (`hot_set_path`), in
// the order given, logged under `tag`-plain and `tag`-libra. Returns the
// pair, as the first round's, for CompareRuns.
json RunRound(ClusterJob job, const std::string& hot_set_path, const std::string& tag,
              bool libra_first, const ClusterRunOptions& where, const ClusterBenchOptions& options,
              const std::string& self) {
  json pair;
  for (const bool libra :
       libra_first ? std::vector<bool>{true, false} : std::vector<bool>{false, true}) {
    if (g_stop) break;
    job.hot_set_path = libra ? hot_set_path : "";
    job.tag = tag + (libra ? "-libra" : "-plain");
    job.config.json_path = fs::absolute(fs::path(options.out_dir) / (job.tag + ".json")).string();
    json& run = pair[libra ? "libra" : "plain"];
    run = RunOnCluster(job, where, self);
    if (run["status"] == 130) g_stop = SIGINT;
  }
  return pair;
}

// Each configuration's speedup over its rounds (--repeat), below the table.
void PrintRounds(const json& report) {
  std::printf("\nspeedup over the rounds (median, range; steady: after the first iteration):\n");
  std::printf("%-12s %-6s %2s %2s %6s | %6s | %18s | %18s | %6s\n", "workload", "model", "N", "M",
              "Mbit/s", "rounds", "speedup", "steady", "U-bnd");
  const auto figure = [](const json& summary, const char* name) {
    if (!summary.contains(name)) return std::string("-");
    char text[48];
    std::snprintf(text, sizeof(text), "%.2f (%.2f-%.2f)", summary[name]["median"].get<double>(),
                  summary[name]["min"].get<double>(), summary[name]["max"].get<double>());
    return std::string(text);
  };
  for (const json& r : report["configurations"]) {
    if (!r.contains("over_rounds")) continue;
    const json& summary = r["over_rounds"];
    const json& overlap_bound = r.value("bound_with_overlap", json::object());
    std::printf("%-12s %-6s %2d %2d %6g | %6d | %18s | %18s | %6.2f\n",
                r["workload"].get<std::string>().c_str(), r["model"].get<std::string>().c_str(),
                r["workers"].get<int>(), r["servers"].get<int>(), r["rate_mbit"].get<double>(),
                summary["rounds"].get<int>(), figure(summary, "speedup").c_str(),
                figure(summary, "steady_speedup").c_str(),
                overlap_bound.value("speedup", std::nan("")));
  }
}

// The hot set of a job on links of `rate_mbit`, chosen offline as `libra
// demo` does: the workload's candidates (or options.capacity cells), cut by
// the cost model unless the set is forced; `plain_epoch_s`: the plain run's
// epoch (iteration), measured (0: unknown).
train::TrainingHotSet ChooseHotSet(const ClusterBenchOptions& options, const Workload& w,
                                   const train::Dataset& train_rows, const train::Model& model,
                                   const train::TrainJobConfig& config, double rate_mbit,
                                   double plain_epoch_s) {
  train::TrainingHotSetOptions hot;
  const bool forced_cells = options.capacity != "auto" && options.capacity != "forced";
  hot.capacity_cells =
      forced_cells ? std::stoull(options.capacity)
      : w.hot_keys
          ? w.hot_keys * model.value_length()
          : hot::SwitchLayoutFor(dataplane::PipelineProfile::Tofino1(), config.workers).capacity();
  hot.workers = static_cast<uint32_t>(config.workers);
  hot.batch = config.batch;
  hot.seed = options.seed;
  hot.min_pushes_per_epoch = w.min_worker_share * config.workers;
  hot.choose_by_cost = options.capacity == "auto";
  hot.servers = static_cast<uint32_t>(config.servers);
  hot.link_mbit = static_cast<uint64_t>(std::llround(rate_mbit));
  // The emulated hosts and the switch all run on this machine's cores.
  hot.shared_cores = std::thread::hardware_concurrency();
  hot.measured_plain_epoch_s = plain_epoch_s;
  return train::FindTrainingHotSet(train_rows, model, hot);
}

}  // namespace

std::vector<Workload> DefaultWorkloads() {
  return {{"paper-30k", 0.85, 30000, 0},  {"paper-full", 0.85, 0, 0},
          {"skewed-full", 1.3, 0, 0},     {"paper-paying", 0.85, 0, 0.5},
          {"skewed-paying", 1.3, 0, 0.5}, {"steep-full", 1.6, 0, 0},
          {"steep-paying", 1.6, 0, 0.5}};
}

int RunClusterBench(const ClusterBenchOptions& options, const std::string& self) {
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
    if (options.capacity != "auto" && options.capacity != "forced")
      train::CheckCapacity(options.capacity);
  } catch (const std::exception& e) {
    std::cerr << "libra bench cluster: --capacity: " << e.what() << "\n";
    return 2;
  }
  if (const std::string why = NetnsCluster::WhyUnavailable(options.loss_percent > 0);
      !why.empty()) {
    std::cerr << "libra bench cluster: " << why << "; run it as root (for example with sudo)\n";
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
                {"capacity", options.capacity},
                {"loss_percent", options.loss_percent},
                {"host_band", options.host_band},
                {"port_band", options.port_band},
                {"dataplane", options.dataplane},
                {"seed", options.seed},
                {"repeat", options.repeat},
                {"cores", sysconf(_SC_NPROCESSORS_ONLN)}}},
              {"configurations", json::array()}};
  int failures = 0;
  const auto bench_start = Clock::now();
  PrintLinks(options);
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
        config.model.kind = train::ParseModelKind(model_name);
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
        const train::Dataset train_rows = train::SliceRows(data, 0, plan.train_rows);

        for (int m : options.servers) {
          for (double rate : options.rate_mbit) {
            if (g_stop) break;
            config.servers = m;
            char rate_text[32];
            std::snprintf(rate_text, sizeof(rate_text), "%g", rate);
            const std::string tag = w.name + "-" + model_name + "-w" + std::to_string(n) + "-s" +
                                    std::to_string(m) + "-" + rate_text + "mbit";
            const std::string hot_set_path =
                fs::absolute(fs::path(options.out_dir) / ("hot-set-" + tag + ".bin")).string();

            ClusterRunOptions where;
            where.out_dir = options.out_dir;
            where.rate_mbit = rate;
            where.loss_percent = options.loss_percent;
            where.host_band = options.host_band;
            where.port_band = options.port_band;
            where.run_timeout_s = options.run_timeout_s;
            where.verbose = options.verbose;
            where.dataplane = options.dataplane;
            ClusterJob job{config, "", plan.iterations_per_epoch * config.epochs, tag + "-plain"};
            job.config.json_path =
                fs::absolute(fs::path(options.out_dir) / (job.tag + ".json")).string();
            json r{{"workload", w.name}, {"skew", w.skew}, {"model", model_name},
                   {"workers", n},       {"servers", m},   {"rate_mbit", rate}};
            double hot_share = 0;
            try {
              r["plain"] = RunOnCluster(job, where, self);
              if (r["plain"]["status"] == 130) g_stop = SIGINT;
              if (g_stop) break;
              // The set is chosen knowing the plain epoch, as the controller
              // knows it from its sampling phase (hot::CostInput).
              const double plain_rate = r["plain"].value("samples_per_second", 0.0);
              const double plain_epoch_s =
                  plain_rate > 0 ? static_cast<double>(n) * config.batch / plain_rate : 0;
              const train::TrainingHotSet found =
                  ChooseHotSet(options, w, train_rows, *model, config, rate, plain_epoch_s);
              hot::WriteHotSetFile(found.hot_set, hot_set_path);
              hot_share = found.hot_update_share();
              r["hot_keys"] = found.hot_set.size();
              r["hot_values"] = found.hot_set.num_values();
              r["hot_share"] = hot_share;
              if (!found.cost_why.empty()) {
                r["cost_model"] = found.cost_why;
                // The prediction beside the measured epochs, so that the
                // model can be checked (a forced set's too).
                r["cost_prediction"] = hot::PredictionJson(found.cost);
              }
              job.hot_set_path = hot_set_path;
              job.tag = tag + "-libra";
              job.config.json_path =
                  fs::absolute(fs::path(options.out_dir) / (job.tag + ".json")).string();
              r["libra"] = RunOnCluster(job, where, self);
              if (r["libra"]["status"] == 130) g_stop = SIGINT;
            } catch (const std::exception& e) {
              r["error"] = e.what();
            }
            const json& plain = r.value("plain", json::object());
            const json& libra = r.value("libra", json::object());
            if (plain.contains("samples_per_second") && libra.contains("samples_per_second")) {
              CompareRuns(n, m, hot_share, options.target_loss, r);
              PrintRow(r);
              if (options.repeat > 1) {
                r["rounds"] = json::array({RoundOf(r)});
                for (int k = 2; k <= options.repeat && !g_stop; ++k) {
                  json again = RunRound(job, hot_set_path, tag + "-r" + std::to_string(k),
                                        /*libra_first=*/k % 2 == 0, where, options, self);
                  if (g_stop) break;
                  const json& plain_again = again.value("plain", json::object());
                  const json& libra_again = again.value("libra", json::object());
                  if (!plain_again.contains("samples_per_second") ||
                      !libra_again.contains("samples_per_second")) {
                    ++failures;
                    std::printf("%-12s %-6s %2d %2d %6g | round %d failed: %s\n", w.name.c_str(),
                                model_name.c_str(), n, m, rate, k,
                                plain_again.contains("error") ? plain_again["error"].dump().c_str()
                                : libra_again.contains("error")
                                    ? libra_again["error"].dump().c_str()
                                    : "no samples/s");
                    break;
                  }
                  CompareRuns(n, m, hot_share, options.target_loss, again);
                  r["rounds"].push_back(RoundOf(again));
                }
                r["over_rounds"] = SummariseRounds(r["rounds"]);
              }
            } else {
              ++failures;
              std::printf("%-12s %-6s %2d %2d %6g | failed: %s\n", w.name.c_str(),
                          model_name.c_str(), n, m, rate,
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
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  if (options.repeat > 1) PrintRounds(report);
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
