#include "train/demo.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "hot/hot_profiler.h"
#include "train/job_plan.h"
#include "train/plot_script.h"
#include "train/synthetic_data.h"
#include "train/train_job.h"
#include "train/train_report.h"
#include "train/training_hot_set.h"

#ifndef LIBRA_PLOT_SCRIPT
#define LIBRA_PLOT_SCRIPT "scripts/plot_demo.py"
#endif

namespace libra::train {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The synthetic set for `rows` rows: made once, then reused. Written under a
// temporary name and renamed, so an interrupted run leaves no half file.
std::string EnsureSyntheticData(const DemoOptions& options) {
  const fs::path path =
      fs::path(options.out_dir) / ("synthetic-" + std::to_string(options.rows) + "-rows.libsvm");
  if (fs::exists(path)) {
    std::cout << "using the cached data set " << path.string() << "\n";
    return path.string();
  }
  SyntheticOptions synthetic;
  synthetic.rows = options.rows;
  synthetic.seed = options.seed;
  std::cout << "generating " << options.rows << " rows of synthetic CTR data into " << path.string()
            << " ..." << std::endl;
  const auto start = Clock::now();
  const fs::path partial = path.string() + ".partial";
  SyntheticWorkload(synthetic).Write(partial.string());
  fs::rename(partial, path);
  std::printf("  done in %.1f s\n", SecondsSince(start));
  return path.string();
}

// Profiles the job's training rows, writes the hot-set file and returns the
// "hot_set" part of the report.
json ProfileTrainingRows(const TrainJobConfig& config, const DemoOptions& options,
                         const std::string& hot_set_path) {
  const auto start = Clock::now();
  Dataset data = ReadDataset(config.data_path);
  const JobPlan plan =
      JobPlan::Make(data.rows(), config.test_fraction, config.workers, config.batch);
  data = SliceRows(data, 0, plan.train_rows);
  ModelConfig model_config = config.model;
  if (model_config.num_fields == 0) model_config.num_fields = data.num_fields;
  const auto model = CreateModel(model_config);
  TrainingHotSetOptions hot_options;
  hot_options.capacity_cells = options.capacity_cells;
  hot_options.workers = static_cast<uint32_t>(config.workers);
  hot_options.batch = config.batch;
  hot_options.seed = options.seed;
  const TrainingHotSet found = FindTrainingHotSet(data, *model, hot_options);
  hot::WriteHotSetFile(found.hot_set, hot_set_path);
  const hot::ProfileReport& p = found.profile;
  std::printf(
      "  %llu hot keys (%llu values in %llu cells) from %.0f%% of the training rows; coverage "
      "sampled %.3f, optimal %.3f; %.1f%% of the pushed key updates are hot (%.1f s)\n",
      static_cast<unsigned long long>(found.hot_set.size()),
      static_cast<unsigned long long>(found.hot_set.num_values()),
      static_cast<unsigned long long>(options.capacity_cells), 100.0 * hot_options.sample_fraction,
      p.sampled_coverage, p.optimal_coverage, 100.0 * found.hot_update_share(),
      SecondsSince(start));
  json by_rank = json::array();
  for (const auto& [rank, updates] : found.updates_by_rank) by_rank.push_back({rank, updates});
  return {{"file", hot_set_path},
          {"capacity_cells", options.capacity_cells},
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
}

// Runs one training job; returns its report, or nothing if it failed.
std::optional<json> Train(TrainJobConfig config, const std::string& self) {
  if (LaunchLocalTraining(config, self) != 0) return std::nullopt;
  try {
    std::ifstream in(config.json_path);
    return json::parse(in);
  } catch (const std::exception& e) {
    std::cerr << "libra demo: cannot read the report " << config.json_path << ": " << e.what()
              << "\n";
    return std::nullopt;
  }
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

bool HotPathWasOn(const json& report) {
  for (const json& node : report.value("nodes", json::array())) {
    if (node.contains("hot_path") && node["hot_path"].value("enabled", false)) return true;
  }
  return false;
}

// The figures that compare the two runs, as they go into the report.
json Compare(const json& hot_set, const std::optional<json>& plain,
             const std::optional<json>& libra) {
  json c = json::object();
  if (libra) {
    const double hot = SumHotPath(*libra, "worker", "hot_values_pushed");
    const double cold = SumHotPath(*libra, "worker", "cold_values_pushed");
    c["hot_path_on"] = HotPathWasOn(*libra);
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

void PrintTable(const json& report) {
  const json& runs = report["runs"];
  const json none = nullptr;
  const json& plain = runs.contains("plain") ? runs["plain"] : none;
  const json& libra = runs.contains("libra") ? runs["libra"] : none;
  const json& hot_set = report.value("hot_set", json::object());
  const json& c = report["comparison"];
  auto field = [](const json& run, auto get) -> std::string {
    return run.is_null() ? std::string("-") : get(run);
  };
  std::printf("\n=== libra demo: %s, %d worker(s), %d server(s) ===\n",
              report["demo"].value("model", "?").c_str(), report["demo"].value("workers", 0),
              report["demo"].value("servers", 0));
  Row("", "plain PS", "Libra");
  Row("samples/s",
      field(plain,
            [](const json& r) {
              return Number("%.0f", r["throughput"].value("samples_per_second", 0.0));
            }),
      field(libra, [](const json& r) {
        return Number("%.0f", r["throughput"].value("samples_per_second", 0.0));
      }));
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
  if (c.contains("servers")) {
    for (const json& s : c["servers"]) {
      Row("server " + std::to_string(s.value("rank", 0)) + " bytes in, predicted", "",
          Megabytes(s.value("predicted_libra_bytes_received", 0.0)) +
              Number(" (x%.2f)", 1.0 - hot_set.value("hot_update_share", 0.0)));
    }
  }
  Row("packets through the switch", "-",
      c.contains("switch_packets_in") ? Number("%.0f", c["switch_packets_in"].get<double>() +
                                                           c["switch_packets_out"].get<double>())
                                      : "-");
  if (!hot_set.empty()) {
    const json& p = hot_set["profile"];
    const json& coverage = p.value("coverage", json::object());
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
  auto final_field = [&field](const json& run, const char* key) {
    return field(run, [key](const json& r) { return Number("%.5f", r["final"].value(key, 0.0)); });
  };
  Row("held-out log loss", final_field(plain, "test_log_loss"),
      final_field(libra, "test_log_loss"));
  Row("held-out AUC", final_field(plain, "test_auc"), final_field(libra, "test_auc"));
  if (!libra.is_null() && !c.value("hot_path_on", false)) {
    std::printf(
        "\n  note: the Libra run's nodes report the hot path off (this build's runtime does not "
        "have it), so it ran the plain parameter server\n");
  }
}

// Draws the figures with scripts/plot_demo.py, if python3 and matplotlib are
// there. Returns the figures written.
json DrawFigures(const std::string& report_path, const std::string& out_dir) {
  json figures = json::array();
  for (const std::string& figure :
       RunPlotScript(LIBRA_PLOT_SCRIPT, report_path, out_dir,
                     {"log_loss.png", "server_bytes.png", "key_frequency.png"})) {
    figures.push_back(figure);
  }
  return figures;
}

}  // namespace

int RunDemo(const DemoOptions& options, const std::string& self) {
  const auto start = Clock::now();
  const bool run_plain = options.libra != "on";
  const bool run_libra = options.libra != "off";
  TrainJobConfig config;
  json report;
  report["demo"] = {{"model", options.model},     {"workers", options.workers},
                    {"servers", options.servers}, {"epochs", options.epochs},
                    {"batch", options.batch},     {"seed", options.seed},
                    {"libra", options.libra}};
  try {
    fs::create_directories(options.out_dir);
    config.data_path = options.data_path.empty() ? EnsureSyntheticData(options) : options.data_path;
    config.model.kind = ParseModelKind(options.model);
    config.model.seed = options.seed;
    config.epochs = options.epochs;
    config.batch = options.batch;
    config.workers = options.workers;
    config.servers = options.servers;
    config.timeout_s = 3600;
    report["demo"]["data"] = config.data_path;
    if (run_libra) {
      std::cout << "finding the hot set (" << options.capacity_cells << " switch cells) ..."
                << std::endl;
      report["hot_set"] = ProfileTrainingRows(config, options,
                                              (fs::path(options.out_dir) / "hot-set.bin").string());
    }
  } catch (const std::exception& e) {
    std::cerr << "libra demo: " << e.what() << "\n";
    return 1;
  }

  std::optional<json> plain, libra;
  const int runs = (run_plain ? 1 : 0) + (run_libra ? 1 : 0);
  int run = 0;
  if (run_plain) {
    std::cout << "\n--- run " << ++run << "/" << runs << ": plain parameter server ---"
              << std::endl;
    config.json_path = (fs::path(options.out_dir) / "report-plain.json").string();
    if (!(plain = Train(config, self))) {
      std::cerr << "libra demo: the plain run failed\n";
      return 1;
    }
  }
  if (run_libra) {
    std::cout << "\n--- run " << ++run << "/" << runs
              << ": Libra (hot keys aggregated in a local switchd) ---" << std::endl;
    config.json_path = (fs::path(options.out_dir) / "report-libra.json").string();
    config.libra.local_switch = true;
    config.libra.hot_set_path = report["hot_set"]["file"];
    if (!(libra = Train(config, self))) {
      std::cerr << "libra demo: the Libra run failed\n";
      return 1;
    }
  }
  report["runs"] = json::object();
  if (plain) report["runs"]["plain"] = *plain;
  if (libra) report["runs"]["libra"] = *libra;
  report["comparison"] = Compare(report.value("hot_set", json::object()), plain, libra);

  const std::string report_path = (fs::path(options.out_dir) / "report.json").string();
  auto write = [&] {
    std::ofstream out(report_path);
    out << report.dump(2) << "\n";
    return static_cast<bool>(out);
  };
  if (!write()) {
    std::cerr << "libra demo: cannot write " << report_path << "\n";
    return 1;
  }
  PrintTable(report);
  std::cout << "\n";
  report["demo"]["figures"] = DrawFigures(report_path, options.out_dir);
  report["demo"]["wall_seconds"] = SecondsSince(start);
  if (!write()) {
    std::cerr << "libra demo: cannot write " << report_path << "\n";
    return 1;
  }
  std::printf("\n  demo wall time   %.1f s (data, profiling, launches and training)\n",
              SecondsSince(start));
  std::cout << "  report           " << report_path << "\n";
  for (const json& figure : report["demo"]["figures"]) {
    std::cout << "  figure           " << figure.get<std::string>() << "\n";
  }
  return 0;
}

}  // namespace libra::train
