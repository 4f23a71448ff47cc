#include "cluster/demo.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cluster/cluster_run.h"
#include "cluster/netns_cluster.h"
#include "data/dataset.h"
#include "hot/hot_profiler.h"
#include "hot/hot_switch_layout.h"
#include "train/job_plan.h"
#include "train/libra_options.h"
#include "train/model.h"
#include "train/plot_script.h"
#include "train/synthetic_data.h"
#include "train/train_job.h"
#include "train/training_hot_set.h"
#include "wire/pipeline_profile.h"

#ifndef LIBRA_PLOT_SCRIPT
#define LIBRA_PLOT_SCRIPT "scripts/plot_demo.py"
#endif

namespace libra::cluster {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// How long a sweep point's plain run trains (SweepEpochs).
constexpr double kMinSweepRunSeconds = 5;

// One progress line: the time since the demo began, an estimate of the
// time left once there is one to give, then what it does now.
class Progress {
 public:
  void Phase(const std::string& what, std::optional<double> seconds_left = std::nullopt) const {
    if (seconds_left) {
      std::printf("[%6.1f s, about %.0f s left] %s\n", SecondsSince(start_),
                  std::max(1.0, *seconds_left), what.c_str());
    } else {
      std::printf("[%6.1f s] %s\n", SecondsSince(start_), what.c_str());
    }
    std::fflush(stdout);
  }
  double seconds() const { return SecondsSince(start_); }

 private:
  Clock::time_point start_ = Clock::now();
};

// What is left, estimated from the plain run (the first one), which takes
// `plain_wall` seconds, `plain_overhead` of them outside training (starting
// the processes, sampling, evaluating): the Libra run as long as it, each
// sweep point two runs of that overhead and kMinSweepRunSeconds of training
// (SweepEpochs sizes them so), and a few seconds for the figures.
double SecondsLeft(double plain_wall, double plain_overhead, bool libra_run_left,
                   size_t sweep_points_left) {
  constexpr double kFigureSeconds = 3;
  return (libra_run_left ? plain_wall : 0.0) +
         static_cast<double>(sweep_points_left) * 2 * (plain_overhead + kMinSweepRunSeconds) +
         kFigureSeconds;
}

std::string Rate(double mbit) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g Mbit/s", mbit);
  return buf;
}

// The synthetic set for `rows` rows: made once, then reused. Written under a
// temporary name and renamed, so an interrupted run leaves no half file.
std::string EnsureSyntheticData(const DemoOptions& options) {
  const fs::path path = fs::absolute(
      fs::path(options.out_dir) / ("synthetic-" + std::to_string(options.rows) + "-rows.libsvm"));
  if (fs::exists(path)) {
    std::cout << "  using the cached data set " << path.string() << "\n";
    return path.string();
  }
  train::SyntheticOptions synthetic;
  synthetic.rows = options.rows;
  synthetic.seed = options.seed;
  std::cout << "  generating " << options.rows << " rows of synthetic CTR data into "
            << path.string() << " ..." << std::endl;
  const fs::path partial = path.string() + ".partial";
  train::SyntheticWorkload(synthetic).Write(partial.string());
  fs::rename(partial, path);
  return path.string();
}

// The job's training rows and model, read once for every hot-set choice.
struct TrainingRows {
  train::Dataset rows;
  std::unique_ptr<train::Model> model;
  uint64_t iterations_per_epoch = 0;
};

TrainingRows ReadTrainingRows(const train::TrainJobConfig& config) {
  train::Dataset data = train::ReadDataset(config.data_path);
  const train::JobPlan plan =
      train::JobPlan::Make(data.rows(), config.test_fraction, config.workers, config.batch);
  train::ModelConfig model_config = config.model;
  if (model_config.num_fields == 0) model_config.num_fields = data.num_fields;
  return {train::SliceRows(data, 0, plan.train_rows), train::CreateModel(model_config),
          plan.iterations_per_epoch};
}

// Chooses the hot set for links of `link_mbit` (0: unknown, loopback),
// writes it to `path` and returns the "hot_set" part of the report. With
// capacity "auto" the cost model cuts the keys that fit the switch to the
// prefix that pays, maybe none, knowing the plain run's epoch
// (`plain_epoch_s`, 0: unknown) as the controller knows it from sampling.
json ChooseHotSet(const TrainingRows& data, const train::TrainJobConfig& config,
                  const DemoOptions& options, double link_mbit, double plain_epoch_s,
                  const std::string& path) {
  const bool by_cost = options.capacity == "auto";
  train::TrainingHotSetOptions hot;
  const uint64_t cells = by_cost ? 0 : std::stoull(options.capacity);
  hot.capacity_cells =
      cells > 0
          ? cells
          : hot::SwitchLayoutFor(dataplane::PipelineProfile::Tofino1(), config.workers).capacity();
  hot.workers = static_cast<uint32_t>(config.workers);
  hot.batch = config.batch;
  hot.seed = options.seed;
  hot.choose_by_cost = by_cost;
  hot.servers = static_cast<uint32_t>(config.servers);
  hot.link_mbit = static_cast<uint64_t>(std::llround(link_mbit));
  // The emulated hosts (or the local nodes) and the switch all run on this
  // machine's cores.
  hot.shared_cores = std::thread::hardware_concurrency();
  hot.measured_plain_epoch_s = plain_epoch_s;
  const train::TrainingHotSet found = train::FindTrainingHotSet(data.rows, *data.model, hot);
  hot::WriteHotSetFile(found.hot_set, path);
  const hot::ProfileReport& p = found.profile;
  std::printf(
      "  %llu hot keys (%llu values; candidates: %llu switch cells, %s) from %.0f%% of the "
      "training rows; coverage sampled %.3f, optimal %.3f; %.1f%% of the pushed key updates are "
      "hot\n",
      static_cast<unsigned long long>(found.hot_set.size()),
      static_cast<unsigned long long>(found.hot_set.num_values()),
      static_cast<unsigned long long>(hot.capacity_cells),
      by_cost ? "cut by the cost model" : "forced", 100.0 * hot.sample_fraction, p.sampled_coverage,
      p.optimal_coverage, 100.0 * found.hot_update_share());
  if (by_cost) std::printf("  cost model: %s\n", found.cost_why.c_str());
  json by_rank = json::array();
  for (const auto& [rank, updates] : found.updates_by_rank) by_rank.push_back({rank, updates});
  json out{{"file", path},
           {"capacity_cells", hot.capacity_cells},
           {"chosen_by_cost", by_cost},
           {"link_mbit", link_mbit},
           {"hot_keys", found.hot_set.size()},
           {"hot_values", found.hot_set.num_values()},
           {"hot_dense_keys", found.hot_dense_keys},
           {"hot_feature_keys", found.hot_feature_keys},
           {"profile", hot::ToJson(p)},
           {"pushes_per_epoch", found.pushes},
           {"key_updates_per_epoch", found.key_updates},
           {"hot_key_updates_per_epoch", found.hot_key_updates},
           {"hot_update_share", found.hot_update_share()},
           {"distinct_keys", found.distinct_keys},
           {"updates_by_rank", by_rank}};
  if (by_cost) out["cost_model"] = found.cost_why;
  return out;
}

// Reads the report worker 0 wrote; nothing if it cannot.
std::optional<json> ReadReport(const std::string& path) {
  try {
    std::ifstream in(path);
    return json::parse(in);
  } catch (const std::exception& e) {
    std::cerr << "libra demo: cannot read the report " << path << ": " << e.what() << "\n";
    return std::nullopt;
  }
}

// One training job on loopback; returns its report, or nothing if it failed.
std::optional<json> TrainOnLoopback(const train::TrainJobConfig& config, const std::string& self) {
  if (train::LaunchLocalTraining(config, self) != 0) return std::nullopt;
  return ReadReport(config.json_path);
}

// One training job on a fresh emulated cluster with links of `rate_mbit`:
// worker 0's report, with the cluster's measurements (links, CPU per
// process, the switch's counters) under "cluster"; nothing if it failed.
std::optional<json> TrainOnCluster(const train::TrainJobConfig& config,
                                   const std::string& hot_set_path, uint64_t pushes_per_worker,
                                   double rate_mbit, const DemoOptions& options,
                                   const std::string& self, const std::string& tag) {
  ClusterJob job;
  job.config = config;
  job.config.print_summary = false;
  job.config.progress_interval_s = 0;
  job.hot_set_path = hot_set_path;
  job.pushes_per_worker = pushes_per_worker;
  job.tag = tag;
  ClusterRunOptions where;
  where.out_dir = options.out_dir;
  where.rate_mbit = rate_mbit;
  where.run_timeout_s = options.run_timeout_s;
  const json result = RunOnCluster(job, where, self);
  if (result.contains("error")) {
    std::cerr << "libra demo: " << result["error"].get<std::string>() << "\n";
    return std::nullopt;
  }
  std::optional<json> report = ReadReport(config.json_path);
  if (!report) return std::nullopt;
  (*report)["cluster"] = result;
  if (result.contains("switch")) (*report)["switch"] = result["switch"];
  return report;
}

// Sums `field` of the hot_path reports of the nodes with `role`.
double SumHotPath(const json& report, const std::string& role, const std::string& field) {
  double sum = 0;
  for (const json& node : report.value("nodes", json::array())) {
    if (node.value("role", "") != role || !node.contains("hot_path")) continue;
    const json& hot = node["hot_path"];
    if (hot.contains(field) && hot[field].is_number()) sum += hot[field].get<double>();
  }
  return sum;
}

// Whether the hot path carried keys in this run: the controller's INSTALL
// turned it on at the workers and servers (an empty hot set leaves it off).
bool HotPathWasOn(const json& report) {
  for (const json& node : report.value("nodes", json::array())) {
    if (node.value("role", "") == "scheduler") continue;
    if (node.value("hot_path", json::object()).value("active", false)) return true;
  }
  return false;
}

// Why a configured hot path ran plain ("" if it did not).
std::string PlainReason(const json& report) {
  for (const json& node : report.value("nodes", json::array())) {
    const json hot = node.value("hot_path", json::object());
    if (hot.contains("plain_reason")) return hot["plain_reason"].get<std::string>();
  }
  return "";
}

// The figures that compare the two runs, as they go into the report.
json Compare(const json& hot_set, const std::optional<json>& plain,
             const std::optional<json>& libra) {
  json c = json::object();
  if (libra) {
    const double hot = SumHotPath(*libra, "worker", "hot_values_pushed");
    const double cold = SumHotPath(*libra, "worker", "cold_values_pushed");
    c["hot_path_on"] = HotPathWasOn(*libra);
    if (const std::string why = PlainReason(*libra); !why.empty()) c["plain_reason"] = why;
    c["pushed_value_share_via_switch"] = hot + cold > 0 ? hot / (hot + cold) : 0.0;
    double utilisation = 0;
    int workers = 0;
    for (const json& node : libra->value("nodes", json::array())) {
      if (node.value("role", "") != "worker" || !node.contains("hot_path")) continue;
      const json& h = node["hot_path"];
      if (!h.contains("slot_utilization")) continue;
      utilisation += h["slot_utilization"].get<double>();
      ++workers;
    }
    c["slot_utilization"] = workers ? utilisation / workers : 0.0;
    if (libra->contains("switch") && (*libra)["switch"].contains("io")) {
      c["switch_packets_in"] = (*libra)["switch"]["io"].value("datagrams_received", uint64_t{0});
      c["switch_packets_out"] = (*libra)["switch"]["io"].value("datagrams_sent", uint64_t{0});
    }
  }
  if (plain && libra) {
    // What the coverage predicts: the hot share of the key updates no longer
    // reaches the servers (neither as pushed keys and values nor as pulls).
    json servers = json::array();
    const json& plain_nodes = (*plain)["nodes"];
    const json& libra_nodes = (*libra)["nodes"];
    for (size_t i = 0; i < plain_nodes.size() && i < libra_nodes.size(); ++i) {
      if (plain_nodes[i].value("role", "") != "server") continue;
      const double before = plain_nodes[i].value("bytes_received", 0.0);
      const double after = libra_nodes[i].value("bytes_received", 0.0);
      servers.push_back({{"rank", plain_nodes[i].value("rank", 0)},
                         {"plain_bytes_received", before},
                         {"libra_bytes_received", after},
                         {"libra_switch_bytes_received", libra_nodes[i]
                                                             .value("hot_path", json::object())
                                                             .value("collector", json::object())
                                                             .value("bytes_received", 0.0)},
                         {"predicted_libra_bytes_received",
                          before * (1.0 - hot_set.value("hot_update_share", 0.0))},
                         {"ratio", before > 0 ? after / before : 0.0}});
    }
    c["servers"] = servers;
    const double plain_rate = (*plain)["throughput"].value("samples_per_second", 0.0);
    c["speedup"] =
        plain_rate > 0 ? (*libra)["throughput"].value("samples_per_second", 0.0) / plain_rate : 0.0;
    if (plain->contains("cluster") && libra->contains("cluster")) {
      // On the emulated cluster: the bound, time to the target loss, the
      // same quality or not (cluster_run.h).
      json pair{{"plain", (*plain)["cluster"]}, {"libra", (*libra)["cluster"]}};
      CompareRuns((*plain)["config"].value("workers", 1), (*plain)["config"].value("servers", 1),
                  hot_set.value("hot_update_share", 0.0), 0, pair);
      for (const char* key :
           {"speedup", "bound", "bound_with_overlap", "test_log_loss_gap", "test_auc_gap",
            "same_quality", "target_loss", "plain_seconds_to_target", "libra_seconds_to_target"}) {
        if (pair.contains(key)) c[key] = pair[key];
      }
    } else {
      c["same_quality"] =
          std::abs((*plain)["final"].value("test_log_loss", 0.0) -
                   (*libra)["final"].value("test_log_loss", 0.0)) <= kQualityTolerance &&
          std::abs((*plain)["final"].value("test_auc", 0.0) -
                   (*libra)["final"].value("test_auc", 0.0)) <= kQualityTolerance;
    }
  }
  return c;
}

std::string Megabytes(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f MB", bytes / 1e6);
  return buf;
}

std::string Number(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, value);
  return buf;
}

void Row(const std::string& name, const std::string& plain, const std::string& libra) {
  std::printf("  %-40s %14s %16s\n", name.c_str(), plain.c_str(), libra.c_str());
}

std::string Seconds(const json& value) {
  return value.is_number() ? Number("%.1f s", value.get<double>()) : std::string("not reached");
}

void PrintTable(const json& report) {
  const json& runs = report["runs"];
  const json none = nullptr;
  const json& plain = runs.contains("plain") ? runs["plain"] : none;
  const json& libra = runs.contains("libra") ? runs["libra"] : none;
  const json& hot_set = report.value("hot_set", json::object());
  const json& c = report["comparison"];
  const bool emulated = report["network"] == "emulated";
  auto field = [](const json& run, auto get) -> std::string {
    return run.is_null() ? std::string("-") : get(run);
  };
  std::printf(
      "\n=== libra demo: %s, %d worker(s), %d server(s), %s ===\n",
      report["demo"].value("model", "?").c_str(), report["demo"].value("workers", 0),
      report["demo"].value("servers", 0),
      emulated
          ? ("emulated network, " + Rate(report["rate_mbit"].get<double>()) + " host links").c_str()
          : "loopback");
  Row("", "plain PS", "Libra");
  auto rate = [](const json& r) {
    return Number("%.0f", r["throughput"].value("samples_per_second", 0.0));
  };
  Row("samples/s", field(plain, rate), field(libra, rate));
  if (c.contains("speedup")) {
    Row("speedup (Libra over plain)", "", Number("%.2fx", c["speedup"].get<double>()));
  }
  if (c.contains("bound")) {
    Row("bound / bound with measured overlap", "",
        Number("%.2fx", c["bound"]["speedup"].get<double>()) + " / " +
            (c.contains("bound_with_overlap")
                 ? Number("%.2fx", c["bound_with_overlap"]["speedup"].get<double>())
                 : std::string("-")));
  }
  if (emulated) {
    auto link = [](bool in) {
      return [in](const json& r) {
        const auto [bytes_in, bytes_out] = ServerLinkBytes(r["cluster"]);
        return Megabytes(in ? bytes_in : bytes_out);
      };
    };
    Row("bytes into the servers' links", field(plain, link(true)), field(libra, link(true)));
    Row("bytes out of the servers' links", field(plain, link(false)), field(libra, link(false)));
  } else {
    const json& nodes = !plain.is_null() ? plain["nodes"] : libra["nodes"];
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (nodes[i].value("role", "") != "server") continue;
      const std::string name = "server " + std::to_string(nodes[i].value("rank", 0));
      auto bytes = [i](const char* key) {
        return [i, key](const json& r) { return Megabytes(r["nodes"][i].value(key, 0.0)); };
      };
      Row(name + " bytes in (ZeroMQ)", field(plain, bytes("bytes_received")),
          field(libra, bytes("bytes_received")));
      Row(name + " bytes in (from switch)", "-", field(libra, [i](const json& r) {
            return Megabytes(r["nodes"][i]
                                 .value("hot_path", json::object())
                                 .value("collector", json::object())
                                 .value("bytes_received", 0.0));
          }));
      Row(name + " bytes out (ZeroMQ)", field(plain, bytes("bytes_sent")),
          field(libra, bytes("bytes_sent")));
    }
  }
  Row("packets through the switch", "-",
      c.contains("switch_packets_in") ? Number("%.0f", c["switch_packets_in"].get<double>() +
                                                           c["switch_packets_out"].get<double>())
                                      : "-");
  if (!hot_set.empty()) {
    const json& coverage = hot_set["profile"].value("coverage", json::object());
    Row("hot-set size (keys)", "-", Number("%.0f", hot_set.value("hot_keys", 0.0)));
    Row("hot-set coverage sampled/optimal", "-",
        Number("%.3f", coverage.value("sampled", 0.0)) + " / " +
            Number("%.3f", coverage.value("optimal", 0.0)));
    Row("hot share of pushed keys (predicted)", "-",
        Number("%.3f", hot_set.value("hot_update_share", 0.0)));
  }
  Row("hot share of pushed values (measured)", "-",
      c.contains("pushed_value_share_via_switch")
          ? Number("%.3f", c["pushed_value_share_via_switch"].get<double>())
          : "-");
  Row("slot utilisation", "-",
      c.contains("slot_utilization") ? Number("%.3f", c["slot_utilization"].get<double>()) : "-");
  if (c.contains("target_loss")) {
    Row("seconds to held-out loss " + Number("%.5f", c["target_loss"].get<double>()),
        Seconds(c["plain_seconds_to_target"]), Seconds(c["libra_seconds_to_target"]));
  }
  auto final_field = [&field](const json& run, const char* key) {
    return field(run, [key](const json& r) { return Number("%.5f", r["final"].value(key, 0.0)); });
  };
  Row("held-out log loss", final_field(plain, "test_log_loss"),
      final_field(libra, "test_log_loss"));
  Row("held-out AUC", final_field(plain, "test_auc"), final_field(libra, "test_auc"));
  if (emulated) {
    // Every process's CPU share: the links, not the 2 cores, set the pace
    // when these stay well below 1 and their sum below the cores.
    auto share = [](const std::string& process) {
      return [process](const json& r) -> std::string {
        for (const json& p : r["cluster"].value("cpu", json::array())) {
          if (p.value("process", "") == process)
            return Number("%.2f", p["cpu_share"].get<double>());
        }
        return "-";
      };
    };
    const json& processes = (!libra.is_null() ? libra : plain)["cluster"]["cpu"];
    for (const json& p : processes) {
      const std::string name = p.value("process", "?");
      Row("CPU share: " + name, field(plain, share(name)), field(libra, share(name)));
    }
    auto total = [](const json& r) { return Number("%.2f", TotalCpuShare(r["cluster"])); };
    Row("CPU share: all processes (cores in use)", field(plain, total), field(libra, total));
  }
  if (!libra.is_null() && !c.value("hot_path_on", false)) {
    std::printf("\n  note: the Libra run used the plain parameter server: %s\n",
                c.value("plain_reason", std::string("the nodes report the hot path off")).c_str());
  }
}

// Epochs of a sweep point's runs: at least --sweep-epochs, and enough that
// the plain run lasts about kMinSweepRunSeconds, so that start-up does not
// decide the ratio on fast links (a 1000 Mbit/s epoch took under a second
// and two plain runs came out 0.55x and 1.40x of each other). The plain
// rate is taken to grow with the link from the main run's, an estimate
// that only sets the run's length (kMinSweepRunSeconds is defined above).
uint32_t SweepEpochs(const DemoOptions& options, const json& main_plain, double rate_mbit) {
  const double rows_per_epoch = main_plain["data"].value("train_rows", 0.0);
  const double main_rate = main_plain["throughput"].value("samples_per_second", 0.0);
  if (rows_per_epoch <= 0 || main_rate <= 0 || options.rate_mbit <= 0) return options.sweep_epochs;
  const double expected_rate = main_rate * rate_mbit / options.rate_mbit;
  const double epochs = std::ceil(kMinSweepRunSeconds * expected_rate / rows_per_epoch);
  return std::max<uint32_t>(options.sweep_epochs, static_cast<uint32_t>(std::min(epochs, 20.0)));
}

// The sweep's entry for one link speed, from its two runs and comparison.
json SweepPoint(double rate_mbit, uint32_t epochs, const json& hot_set, const json& plain,
                const json& libra, const json& c) {
  json point{{"rate_mbit", rate_mbit},
             {"epochs", epochs},
             {"plain_samples_per_second", plain["throughput"]["samples_per_second"]},
             {"libra_samples_per_second", libra["throughput"]["samples_per_second"]},
             {"speedup", c["speedup"]},
             {"hot_keys", hot_set["hot_keys"]},
             {"hot_update_share", hot_set["hot_update_share"]},
             {"hot_path_on", c.value("hot_path_on", false)},
             {"same_quality", c.value("same_quality", false)}};
  if (c.contains("bound")) point["bound"] = c["bound"]["speedup"];
  if (c.contains("bound_with_overlap")) {
    point["bound_with_overlap"] = c["bound_with_overlap"]["speedup"];
  }
  if (hot_set.contains("cost_model")) point["cost_model"] = hot_set["cost_model"];
  return point;
}

void PrintSweepPoint(const json& p) {
  std::printf("  %8s: plain %7.0f/s, Libra %7.0f/s: %.2fx (bound %.2fx); %s\n",
              Rate(p["rate_mbit"].get<double>()).c_str(),
              p["plain_samples_per_second"].get<double>(),
              p["libra_samples_per_second"].get<double>(), p["speedup"].get<double>(),
              p.value("bound", 1.0),
              p["hot_path_on"].get<bool>()
                  ? (std::to_string(p["hot_keys"].get<uint64_t>()) + " hot keys").c_str()
                  : "cost model: no hot set pays, Libra ran plain");
  std::fflush(stdout);
}

// Draws the figures with scripts/plot_demo.py, if python3 and matplotlib are
// there. Returns the figures written.
json DrawFigures(const std::string& report_path, const std::string& out_dir, bool sweep) {
  std::vector<std::string> expected{"log_loss.png", "server_bytes.png", "key_frequency.png"};
  if (sweep) expected.push_back("sweep.png");
  json figures = json::array();
  for (const std::string& figure :
       train::RunPlotScript(LIBRA_PLOT_SCRIPT, report_path, out_dir, expected)) {
    figures.push_back(figure);
  }
  return figures;
}

bool WriteReport(const json& report, const std::string& path) {
  std::ofstream out(path);
  out << report.dump(2) << "\n";
  if (!out) std::cerr << "libra demo: cannot write " << path << "\n";
  return static_cast<bool>(out);
}

// The line a user can paste: speedup, link speed, model, quality.
std::string SummaryLine(const json& report) {
  const json& c = report["comparison"];
  const json& demo = report["demo"];
  const std::string where = report["network"] == "emulated"
                                ? Rate(report["rate_mbit"].get<double>()) + " emulated links"
                                : std::string("loopback");
  char line[512];
  std::snprintf(line, sizeof(line),
                "libra demo: Libra %.2fx the plain PS's samples/s on %s (%s, %d workers, %d "
                "server(s), %llu hot keys%s); held-out loss and AUC %s",
                c.value("speedup", 0.0), where.c_str(), demo.value("model", "?").c_str(),
                demo.value("workers", 0), demo.value("servers", 0),
                static_cast<unsigned long long>(
                    report.value("hot_set", json::object()).value("hot_keys", uint64_t{0})),
                c.value("hot_path_on", false) ? "" : ", hot path off",
                c.value("same_quality", false) ? "equal (within 1e-4)" : "DIFFER");
  return line;
}

}  // namespace

int RunDemo(const DemoOptions& options, const std::string& self) {
  Progress progress;
  const bool run_plain = options.libra != "on";
  const bool run_libra = options.libra != "off";
  try {
    if (options.capacity != "auto") train::CheckCapacity(options.capacity);
  } catch (const std::exception& e) {
    std::cerr << "libra demo: --capacity: " << e.what() << "\n";
    return 2;
  }

  // Where to train: the emulated cluster when it can be built here.
  bool emulated = options.network == "emulated";
  if (options.network != "loopback") {
    const std::string why = NetnsCluster::WhyUnavailable();
    if (emulated && !why.empty()) {
      std::cerr << "libra demo: --network emulated: " << why << "\n";
      return 2;
    }
    emulated = why.empty();
    if (!emulated) {
      std::cout << "network: loopback, not an emulated cluster: " << why
                << " (there Libra loses: bytes are free and the switch only costs CPU)\n";
    }
  }
  if (emulated) NetnsCluster::RemoveStale();
  const double link_mbit = emulated ? options.rate_mbit : 0;
  const bool sweep = emulated && run_plain && run_libra && !options.sweep_mbit.empty();

  json report;
  report["network"] = emulated ? "emulated" : "loopback";
  report["rate_mbit"] = emulated ? json(options.rate_mbit) : json(nullptr);
  report["speedup"] = nullptr;
  report["demo"] = {{"model", options.model},     {"workers", options.workers},
                    {"servers", options.servers}, {"epochs", options.epochs},
                    {"batch", options.batch},     {"seed", options.seed},
                    {"libra", options.libra},     {"capacity", options.capacity}};
  train::TrainJobConfig config;
  TrainingRows rows;
  try {
    fs::create_directories(options.out_dir);
    progress.Phase("data: " + std::to_string(options.rows) + " rows");
    config.data_path = options.data_path.empty() ? EnsureSyntheticData(options)
                                                 : fs::absolute(options.data_path).string();
    config.model.kind = train::ParseModelKind(options.model);
    config.model.seed = options.seed;
    config.epochs = options.epochs;
    config.batch = options.batch;
    config.workers = options.workers;
    config.servers = options.servers;
    config.timeout_s = 3600;
    report["demo"]["data"] = config.data_path;
    rows = ReadTrainingRows(config);
  } catch (const std::exception& e) {
    std::cerr << "libra demo: " << e.what() << "\n";
    return 1;
  }
  // A plain run's epoch (iteration), from its throughput; 0 without one.
  auto epoch_of = [&](const std::optional<json>& run) {
    const double rate = run ? (*run)["throughput"].value("samples_per_second", 0.0) : 0.0;
    return rate > 0 ? static_cast<double>(config.workers) * config.batch / rate : 0.0;
  };

  // One run; its report, or nothing if it failed.
  auto train = [&](bool libra, uint32_t epochs, const json& hot_set, double rate,
                   const std::string& tag) -> std::optional<json> {
    train::TrainJobConfig c = config;
    c.epochs = epochs;
    c.json_path = fs::absolute(fs::path(options.out_dir) / ("report-" + tag + ".json")).string();
    const std::string hot_set_path = libra ? hot_set["file"].get<std::string>() : "";
    if (emulated) {
      return TrainOnCluster(c, hot_set_path, rows.iterations_per_epoch * epochs, rate, options,
                            self, tag);
    }
    c.libra.local_switch = libra;
    c.libra.hot_set_path = hot_set_path;
    return TrainOnLoopback(c, self);
  };
  const std::string where =
      emulated ? " on the emulated cluster, " + Rate(link_mbit) + " links" : " on loopback";
  std::optional<json> plain, libra;
  // The estimate of what is left, once the plain run has been timed.
  std::optional<double> plain_wall, plain_overhead;
  size_t sweep_left = 0;
  if (sweep) {
    for (double rate : options.sweep_mbit) sweep_left += rate == options.rate_mbit ? 0 : 1;
  }
  auto left = [&](bool libra_run_left) -> std::optional<double> {
    if (!plain_wall) return std::nullopt;
    return SecondsLeft(*plain_wall, *plain_overhead, libra_run_left, sweep_left);
  };
  if (run_plain) {
    progress.Phase("run: plain parameter server" + where);
    const double started = progress.seconds();
    if (!(plain = train(false, options.epochs, nullptr, link_mbit, "plain"))) {
      std::cerr << "libra demo: the plain run failed\n";
      return 1;
    }
    plain_wall = progress.seconds() - started;
    const double rate = (*plain)["throughput"].value("samples_per_second", 0.0);
    const double samples = (*plain)["data"].value("train_rows", 0.0) * options.epochs;
    plain_overhead = std::clamp(*plain_wall - (rate > 0 ? samples / rate : 0.0), 0.0, *plain_wall);
  }
  if (run_libra) {
    progress.Phase(std::string("hot set: ") +
                   (options.capacity == "auto"
                        ? "the keys that pay on " +
                              (emulated ? Rate(link_mbit) + " links" : std::string("loopback"))
                        : options.capacity + " switch cells, forced"));
    try {
      report["hot_set"] =
          ChooseHotSet(rows, config, options, link_mbit, epoch_of(plain),
                       fs::absolute(fs::path(options.out_dir) / "hot-set.bin").string());
    } catch (const std::exception& e) {
      std::cerr << "libra demo: " << e.what() << "\n";
      return 1;
    }
    progress.Phase("run: Libra (hot keys aggregated in libra switchd)" + where, left(true));
    if (!(libra = train(true, options.epochs, report["hot_set"], link_mbit, "libra"))) {
      std::cerr << "libra demo: the Libra run failed\n";
      return 1;
    }
  }
  report["runs"] = json::object();
  if (plain) report["runs"]["plain"] = *plain;
  if (libra) report["runs"]["libra"] = *libra;
  report["comparison"] = Compare(report.value("hot_set", json::object()), plain, libra);
  if (report["comparison"].contains("speedup")) report["speedup"] = report["comparison"]["speedup"];
  const std::string report_path = (fs::path(options.out_dir) / "report.json").string();
  if (!WriteReport(report, report_path)) return 1;
  PrintTable(report);
  std::cout << std::endl;

  // The speedup against the link speed: the main run is the point at its
  // rate, the others are shorter runs.
  if (sweep) {
    report["sweep"] = json::array();
    for (double rate : options.sweep_mbit) {
      if (rate == options.rate_mbit) {
        report["sweep"].push_back(SweepPoint(rate, options.epochs, report["hot_set"], *plain,
                                             *libra, report["comparison"]));
        PrintSweepPoint(report["sweep"].back());
        continue;
      }
      progress.Phase("sweep: " + Rate(rate) + " (plain and Libra)", left(false));
      --sweep_left;
      char tag[64];
      std::snprintf(tag, sizeof(tag), "sweep-%gmbit", rate);
      const uint32_t epochs = SweepEpochs(options, *plain, rate);
      const auto p = train(false, epochs, nullptr, rate, std::string(tag) + "-plain");
      json hot_set;
      try {
        char name[64];
        std::snprintf(name, sizeof(name), "hot-set-%gmbit.bin", rate);
        hot_set = ChooseHotSet(rows, config, options, rate, epoch_of(p),
                               fs::absolute(fs::path(options.out_dir) / name).string());
      } catch (const std::exception& e) {
        std::cerr << "libra demo: " << e.what() << "\n";
        return 1;
      }
      const auto l = train(true, epochs, hot_set, rate, std::string(tag) + "-libra");
      if (!p || !l) {
        std::cerr << "libra demo: the sweep's runs at " << Rate(rate) << " failed\n";
        return 1;
      }
      report["sweep"].push_back(SweepPoint(rate, epochs, hot_set, *p, *l, Compare(hot_set, p, l)));
      PrintSweepPoint(report["sweep"].back());
      if (!WriteReport(report, report_path)) return 1;
    }
  }

  progress.Phase("figures", left(false));
  report["demo"]["figures"] = DrawFigures(report_path, options.out_dir, sweep);
  report["demo"]["wall_seconds"] = progress.seconds();
  if (!WriteReport(report, report_path)) return 1;
  std::printf("\n  demo wall time   %.1f s (data, hot set, training runs%s, figures)\n",
              progress.seconds(), sweep ? ", sweep" : "");
  std::cout << "  report           " << report_path << "\n";
  for (const json& figure : report["demo"]["figures"]) {
    std::cout << "  figure           " << figure.get<std::string>() << "\n";
  }
  if (plain && libra) std::cout << "\n" << SummaryLine(report) << "\n";
  return 0;
}

}  // namespace libra::cluster
