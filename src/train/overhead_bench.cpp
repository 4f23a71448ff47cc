#include "train/overhead_bench.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "train/model.h"
#include "train/synthetic_data.h"
#include "train/train_job.h"

namespace libra::train {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr uint64_t kDataSeed = 4;

// The cached data set of `model`: libsvm for LR and FM, Criteo-format (with
// its fields) for DeepFM.
std::string EnsureData(const OverheadBenchOptions& options, const std::string& model) {
  const bool criteo = model == "deepfm";
  const fs::path path = fs::path(options.out_dir) / ((criteo ? "criteo-" : "libsvm-") +
                                                     std::to_string(options.rows) + "-rows.txt");
  if (fs::exists(path)) return path.string();
  fs::create_directories(options.out_dir);
  SyntheticOptions synthetic;
  synthetic.rows = options.rows;
  synthetic.seed = kDataSeed;
  synthetic.format = criteo ? SyntheticFormat::kCriteo : SyntheticFormat::kLibsvm;
  const fs::path partial = path.string() + ".partial";
  SyntheticWorkload(synthetic).Write(partial.string());
  fs::rename(partial, path);
  return path.string();
}

// Per-epoch rate of a counter: total / epochs (0 without epochs).
double PerEpoch(const json& counters, const char* name, double epochs) {
  return epochs > 0 ? counters.value(name, 0.0) / epochs : 0.0;
}

const json* NodeOf(const json& report, const std::string& role, int rank) {
  for (const json& node : report["nodes"]) {
    if (node.value("role", "") == role && node.value("rank", -1) == rank) return &node;
  }
  return nullptr;
}

// What one run's report says about the iteration and the hot path.
json Summarise(const json& report) {
  json out;
  out["samples_per_second"] = report["throughput"]["samples_per_second"];
  out["model_fingerprint"] = report.value("model_fingerprint", "");
  out["test_log_loss"] = report["final"]["test_log_loss"];
  const json& it = report["iterations"];
  const double iterations = it.value("count", 0.0);
  for (const char* part : {"pull_ms", "compute_ms", "push_ms", "total_ms"}) {
    out["worker0_ms_per_iteration"][part] = it[part].value("mean", 0.0);
  }
  // ZeroMQ bytes per iteration at every node (the plain path and control).
  for (const json& node : report["nodes"]) {
    const std::string name = node.value("role", "") + std::to_string(node.value("rank", 0));
    out["zmq_bytes_per_iteration"][name] = {
        {"sent", iterations > 0 ? node.value("bytes_sent", 0.0) / iterations : 0.0},
        {"received", iterations > 0 ? node.value("bytes_received", 0.0) / iterations : 0.0}};
  }
  // CPU milliseconds per iteration of every process, and all of them.
  double cpu_total = 0;
  for (const json& process : report.value("processes", json::array())) {
    const double ms = iterations > 0 ? process.value("cpu_seconds", 0.0) * 1e3 / iterations : 0.0;
    out["cpu_ms_per_iteration"][process.value("name", "?")] = ms;
    cpu_total += ms;
  }
  out["cpu_ms_per_iteration"]["total"] = cpu_total;
  const json* worker = NodeOf(report, "worker", 0);
  const json* server = NodeOf(report, "server", 0);
  const json* scheduler = NodeOf(report, "scheduler", 0);
  const double epochs = worker ? (*worker)["hot_path"].value("epochs_hot", 0.0) : 0.0;
  out["hot_epochs"] = epochs;
  if (scheduler && (*scheduler)["hot_path"].contains("cost_model")) {
    out["cost_model"] = (*scheduler)["hot_path"]["cost_model"];
  }
  // The sampling phase's one-off cost beyond counting: the controller's
  // choice once the last JOIN is in, and worker 0's wait for it at the
  // first hot epoch.
  if (out.contains("cost_model") && out["cost_model"].is_object()) {
    out["sampling"] = {
        {"decide_ms", out["cost_model"].value("decide_micros", 0.0) / 1e3},
        {"worker0_install_wait_ms",
         worker ? (*worker)["hot_path"].value("install_wait_micros", 0.0) / 1e3 : 0.0}};
  }
  if (epochs == 0) return out;
  const json sender = (*worker)["hot_path"].value("sender", json::object());
  out["worker0_hot_per_epoch"] = {
      {"data_packets", PerEpoch(sender, "data_packets", epochs)},
      {"fin_packets", PerEpoch(sender, "fin_packets", epochs)},
      {"replica_packets", PerEpoch(sender, "replica_packets", epochs)},
      {"retransmissions", PerEpoch(sender, "retransmissions", epochs)},
      {"bytes_sent", PerEpoch(sender, "bytes_sent", epochs)},
      {"bytes_received", PerEpoch(sender, "bytes_received", epochs)},
      {"hot_send_ms", PerEpoch(sender, "data_micros", epochs) / 1e3},
      {"replica_wait_ms", PerEpoch(sender, "pull_wait_micros", epochs) / 1e3}};
  if (server) {
    const json& hot = (*server)["hot_path"];
    const json collector = hot.value("collector", json::object());
    out["server0_hot_per_epoch"] = {
        {"collect_packets", PerEpoch(collector, "collect_packets", epochs)},
        {"results", PerEpoch(collector, "results", epochs)},
        {"written_values", PerEpoch(collector, "written_values", epochs)},
        {"update_packets", PerEpoch(collector, "update_packets", epochs)},
        {"ready_polls", PerEpoch(collector, "ready_polls", epochs)},
        {"timeouts", PerEpoch(collector, "timeouts", epochs)},
        {"bytes_sent", PerEpoch(collector, "bytes_sent", epochs)},
        {"bytes_received", PerEpoch(collector, "bytes_received", epochs)},
        {"collect_ms", PerEpoch(collector, "collect_micros", epochs) / 1e3},
        {"apply_ms", PerEpoch(hot, "apply_micros", epochs) / 1e3}};
  }
  if (report.contains("switch")) {
    const json events = report["switch"].value("events", json::object());
    json per_epoch;
    for (const char* kind :
         {"data_packets", "acks", "fin_packets", "ready_sent", "collect_packets", "results_sent",
          "update_packets", "replicas_sent", "retransmissions"}) {
      per_epoch[kind] = PerEpoch(events, kind, epochs);
    }
    out["switch_per_epoch"] = per_epoch;
  }
  return out;
}

json RunOne(TrainJobConfig config, const std::string& self, const std::string& name) {
  config.json_path = (fs::path(config.json_path).parent_path() / (name + ".json")).string();
  if (LaunchLocalTraining(config, self) != 0) {
    throw std::runtime_error("libra bench overhead: the run " + name + " failed");
  }
  std::ifstream in(config.json_path);
  return Summarise(json::parse(in));
}

// The median of a configuration's ratios over the rounds (of an even count,
// the mean of the middle two: with two rounds the upper median would be the
// better round).
double MedianOf(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// One entry per configuration and hot set: its ratios over the rounds, their
// median and range. A hot set "plain" is the plain PS against itself: the
// spread of that column is the bench's own noise.
json SummariseRounds(const json& configs) {
  std::map<std::tuple<std::string, uint32_t, int, int, std::string>, std::vector<double>> ratios;
  std::vector<std::tuple<std::string, uint32_t, int, int, std::string>> order;
  for (const json& c : configs) {
    const auto key = std::make_tuple(c["model"].get<std::string>(), c["batch"].get<uint32_t>(),
                                     c["workers"].get<int>(), c["servers"].get<int>(),
                                     c["hot_set"].get<std::string>());
    if (!ratios.contains(key)) order.push_back(key);
    ratios[key].push_back(c["ratio"].get<double>());
  }
  json summary = json::array();
  for (const auto& key : order) {
    const std::vector<double>& r = ratios[key];
    summary.push_back({{"model", std::get<0>(key)},
                       {"batch", std::get<1>(key)},
                       {"workers", std::get<2>(key)},
                       {"servers", std::get<3>(key)},
                       {"hot_set", std::get<4>(key)},
                       {"ratios", r},
                       {"median_ratio", MedianOf(r)},
                       {"min_ratio", *std::min_element(r.begin(), r.end())},
                       {"max_ratio", *std::max_element(r.begin(), r.end())}});
  }
  return summary;
}

// One entry per hot set, over every configuration: the geometric mean of
// all its rounds' ratios and how many configurations' medians reach 0.95
// (the target for the cost model's set). Beside the same for
// "plain", the plain PS against itself, it says whether a hot set's misses
// are more than the bench's own noise.
json SummariseHotSets(const json& summary) {
  std::map<std::string, std::vector<const json*>> by_hot_set;
  std::vector<std::string> order;
  for (const json& s : summary) {
    const std::string hot_set = s["hot_set"].get<std::string>();
    if (!by_hot_set.contains(hot_set)) order.push_back(hot_set);
    by_hot_set[hot_set].push_back(&s);
  }
  json out = json::array();
  for (const std::string& hot_set : order) {
    double log_sum = 0;
    std::size_t rounds = 0, at_least = 0;
    for (const json* s : by_hot_set[hot_set]) {
      for (const json& r : (*s)["ratios"]) {
        log_sum += std::log(r.get<double>());
        ++rounds;
      }
      if ((*s)["median_ratio"].get<double>() >= 0.95) ++at_least;
    }
    out.push_back({{"hot_set", hot_set},
                   {"configurations", by_hot_set[hot_set].size()},
                   {"rounds", rounds},
                   {"geometric_mean_ratio", std::exp(log_sum / static_cast<double>(rounds))},
                   {"medians_at_least_0_95", at_least}});
  }
  return out;
}

void PrintSummary(const json& summary) {
  std::printf("\nratio over the rounds (median, range):\n");
  std::printf("%-7s %5s %2s %2s %-6s %7s %13s\n", "model", "batch", "N", "M", "hot", "median",
              "range");
  for (const json& s : summary) {
    std::printf("%-7s %5u %2d %2d %-6s %7.2f %6.2f-%.2f\n", s["model"].get<std::string>().c_str(),
                s["batch"].get<uint32_t>(), s["workers"].get<int>(), s["servers"].get<int>(),
                s["hot_set"].get<std::string>().c_str(), s["median_ratio"].get<double>(),
                s["min_ratio"].get<double>(), s["max_ratio"].get<double>());
  }
  std::fflush(stdout);
}

void PrintHotSets(const json& hot_sets) {
  std::printf("\nover every configuration and round:\n");
  std::printf("%-6s %14s %22s\n", "hot", "geometric mean", "medians >= 0.95");
  for (const json& h : hot_sets) {
    std::printf("%-6s %14.3f %15zu of %zu\n", h["hot_set"].get<std::string>().c_str(),
                h["geometric_mean_ratio"].get<double>(),
                h["medians_at_least_0_95"].get<std::size_t>(),
                h["configurations"].get<std::size_t>());
  }
  std::fflush(stdout);
}

}  // namespace

void CheckOverheadBenchOptions(const OverheadBenchOptions& options) {
  for (const std::string& model : options.models) ParseModelKind(model);
  for (const std::string& hot_set : options.hot_sets) {
    if (hot_set == "auto" || hot_set == "whole" || hot_set == "plain") continue;
    CheckCapacity(hot_set);
    if (hot_set == "0") throw std::invalid_argument("--hot-sets: use 'whole', not 0 keys");
  }
  if (options.rows == 0 || options.epochs == 0 || options.repeat == 0) {
    throw std::invalid_argument("--rows, --epochs and --repeat must be positive");
  }
  if (options.batches.empty() || options.workers.empty() || options.servers.empty() ||
      options.models.empty() || options.hot_sets.empty()) {
    throw std::invalid_argument("every list option needs at least one value");
  }
}

json RunOverheadBench(const OverheadBenchOptions& options, const std::string& self) {
  CheckOverheadBenchOptions(options);
  json report;
  report["options"] = {
      {"rows", options.rows},         {"epochs", options.epochs},   {"models", options.models},
      {"batches", options.batches},   {"workers", options.workers}, {"servers", options.servers},
      {"hot_sets", options.hot_sets}, {"repeat", options.repeat},   {"realtime", options.realtime}};
  report["configs"] = json::array();
  // cpu: CPU milliseconds per iteration of all the job's processes, plain
  // and Libra; cpu ratio = plain's over Libra's, the ratio the two would
  // have if the machine's cores were all that limited them.
  // choice/wait: the controller's choice after the last JOIN and worker
  // 0's wait for it at the first hot epoch, in ms (sampled sets only).
  std::printf("%-7s %5s %2s %2s %-6s %12s %12s %6s %22s %15s %9s %12s %9s\n", "model", "batch", "N",
              "M", "hot", "plain/s", "libra/s", "ratio", "libra pull/comp/push", "cpu ms/it",
              "cpu ratio", "choice/wait", "hot keys");
  const fs::path runs = fs::path(options.out_dir) / "runs";
  fs::create_directories(runs);
  for (uint32_t round = 0; round < options.repeat; ++round) {
    for (const std::string& model : options.models) {
      const std::string data = EnsureData(options, model);
      for (uint32_t batch : options.batches) {
        for (int workers : options.workers) {
          for (int servers : options.servers) {
            TrainJobConfig config;
            config.data_path = data;
            config.model.kind = ParseModelKind(model);
            if (model == "deepfm") config.model.num_fields = NumFieldsOf(data);
            config.epochs = options.epochs;
            config.batch = batch;
            config.workers = workers;
            config.servers = servers;
            config.timeout_s = 1800;
            config.progress_interval_s = 3600;
            config.json_path = (runs / "x.json").string();
            const std::string tag = model + "-b" + std::to_string(batch) + "-w" +
                                    std::to_string(workers) + "-s" + std::to_string(servers) +
                                    "-r" + std::to_string(round);
            const uint32_t values_per_key = CreateModel(config.model)->value_length();
            // Odd rounds run the plain reference after the others: a machine
            // that speeds up or slows down during a round then favours
            // neither side over the rounds.
            const bool plain_last = round % 2 == 1;
            std::vector<json> libra_runs(options.hot_sets.size());
            auto run_hot_sets = [&] {
              for (std::size_t h = 0; h < options.hot_sets.size(); ++h) {
                const std::string& hot_set = options.hot_sets[h];
                TrainJobConfig libra = config;
                if (hot_set != "plain") {
                  libra.libra.local_switch = true;
                  libra.libra.capacity =
                      hot_set == "auto"    ? "auto"
                      : hot_set == "whole" ? "0"
                                           : std::to_string(std::stoull(hot_set) * values_per_key);
                }
                libra_runs[h] =
                    RunOne(libra, self, tag + "-" + (hot_set == "plain" ? "plain-again" : hot_set));
              }
            };
            json plain;
            if (plain_last) run_hot_sets();
            plain = RunOne(config, self, tag + "-plain");
            if (!plain_last) run_hot_sets();
            for (std::size_t h = 0; h < options.hot_sets.size(); ++h) {
              const std::string& hot_set = options.hot_sets[h];
              const json& run = libra_runs[h];
              const double ratio = run["samples_per_second"].get<double>() /
                                   plain["samples_per_second"].get<double>();
              const double plain_cpu = plain["cpu_ms_per_iteration"].value("total", 0.0);
              const double libra_cpu = run["cpu_ms_per_iteration"].value("total", 0.0);
              const double cpu_ratio = libra_cpu > 0 ? plain_cpu / libra_cpu : 0.0;
              json entry = {{"model", model},        {"batch", batch},     {"workers", workers},
                            {"servers", servers},    {"hot_set", hot_set}, {"round", round},
                            {"plain", plain},        {"libra", run},       {"ratio", ratio},
                            {"cpu_ratio", cpu_ratio}};
              const json& split = run["worker0_ms_per_iteration"];
              const double hot_keys = run.contains("cost_model") && run["cost_model"].is_object()
                                          ? run["cost_model"].value("keys", 0.0)
                                          : -1;
              char line[64];
              std::snprintf(line, sizeof line, "%.2f/%.2f/%.2f", split.value("pull_ms", 0.0),
                            split.value("compute_ms", 0.0), split.value("push_ms", 0.0));
              char cpu[32];
              std::snprintf(cpu, sizeof cpu, "%.2f/%.2f", plain_cpu, libra_cpu);
              char sampling[32] = "-";
              if (run.contains("sampling")) {
                std::snprintf(sampling, sizeof sampling, "%.1f/%.1f",
                              run["sampling"].value("decide_ms", 0.0),
                              run["sampling"].value("worker0_install_wait_ms", 0.0));
              }
              std::printf("%-7s %5u %2d %2d %-6s %12.0f %12.0f %6.2f %22s %15s %9.2f %12s %9s\n",
                          model.c_str(), batch, workers, servers, hot_set.c_str(),
                          plain["samples_per_second"].get<double>(),
                          run["samples_per_second"].get<double>(), ratio, line, cpu, cpu_ratio,
                          sampling,
                          hot_keys >= 0 ? std::to_string(static_cast<long>(hot_keys)).c_str()
                                        : (run.value("hot_epochs", 0.0) > 0 ? "forced" : "-"));
              std::fflush(stdout);
              report["configs"].push_back(std::move(entry));
            }
          }
        }
      }
    }
  }
  report["summary"] = SummariseRounds(report["configs"]);
  PrintSummary(report["summary"]);
  report["hot_sets"] = SummariseHotSets(report["summary"]);
  PrintHotSets(report["hot_sets"]);
  return report;
}

}  // namespace libra::train
