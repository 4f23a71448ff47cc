#include "train/train_job.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "data/dataset.h"
#include "data/text_parsers.h"
#include "hot/median.h"
#include "hotpath/controller/switch_control_client.h"
#include "hotpath/hot_path.h"
#include "hotpath/node/hot_path_config.h"
#include "launch/launcher.h"
#include "ps/ps.h"
#include "train/checkpoint.h"
#include "train/checkpoint_coordinator.h"
#include "train/job_plan.h"
#include "train/local_switchd.h"
#include "train/node_reporter.h"
#include "train/ps_worker_trainer.h"
#include "train/sync_optimizer_server.h"
#include "train/train_report.h"

namespace libra::train {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Keeps the first `rows` rows.
void TruncateRows(Dataset* data, size_t rows) {
  if (rows >= data->rows()) return;
  const uint64_t nonzeros = data->row_begin[rows];
  data->labels.resize(rows);
  data->row_begin.resize(rows + 1);
  data->keys.resize(nonzeros);
  data->values.resize(nonzeros);
  data->fields.resize(nonzeros);
}

// Rows rank, rank + step, ... below `end` of `data`.
Dataset EveryNthRow(const Dataset& data, size_t rank, size_t step, size_t end) {
  Dataset part;
  part.num_fields = data.num_fields;
  for (size_t r = rank; r < end; r += step) part.AppendRow(data, r);
  return part;
}

json Summarise(std::vector<float> ms) {
  if (ms.empty()) return {{"mean", 0}, {"p50", 0}, {"p90", 0}, {"p99", 0}, {"max", 0}};
  std::sort(ms.begin(), ms.end());
  double sum = 0;
  for (float m : ms) sum += m;
  auto at = [&](double q) {
    return ms[std::min(ms.size() - 1, static_cast<size_t>(q * ms.size()))];
  };
  return {{"mean", sum / ms.size()},
          {"p50", at(0.5)},
          {"p90", at(0.9)},
          {"p99", at(0.99)},
          {"max", ms.back()}};
}

// The hot path as this node was told to run it (the LIBRA_* variables), or
// null when it is off.
json LibraJson() {
  if (std::getenv("LIBRA_SWITCH") == nullptr) return nullptr;
  json libra = json::object();
  for (const char* name : {"LIBRA_SWITCH", "LIBRA_SWITCH_CONTROL", "LIBRA_HOT_SET",
                           "LIBRA_SAMPLE_EPOCHS", "LIBRA_CAPACITY", "LIBRA_JOB_ID"}) {
    if (const char* value = std::getenv(name)) libra[name] = value;
  }
  return libra;
}

json ConfigJson(const TrainJobConfig& c, const ModelConfig& model) {
  const json libra = LibraJson();
  return {{"data", c.data_path},
          {"model", ModelKindName(model.kind)},
          {"embedding_dim", model.embedding_dim},
          {"num_fields", model.num_fields},
          {"optimizer", OptimizerKindName(c.optimizer.kind)},
          {"learning_rate", c.optimizer.learning_rate},
          {"l1", c.optimizer.l1},
          {"l2", c.optimizer.l2},
          {"epochs", c.epochs},
          {"batch_per_worker", c.batch},
          {"total_batch", static_cast<uint64_t>(c.batch) * ps::NumWorkers()},
          {"workers", ps::NumWorkers()},
          {"servers", ps::NumServers()},
          {"seed", model.seed},
          {"test_fraction", c.test_fraction},
          {"mode", "bsp"},
          {"hot_path", !libra.is_null()},
          {"libra", libra}};
}

// Worker 0's account of the job, from its own records and every node's entry.
json BuildReport(const TrainJobConfig& config, const ModelConfig& model, const JobPlan& plan,
                 const ReadStats& read, const std::vector<json>& nodes,
                 const std::vector<json>& epochs_seen, const json& loss_curve,
                 const PsWorkerTrainer& trainer, double load_seconds, double wall_seconds) {
  json report;
  report["config"] = ConfigJson(config, model);
  report["data"] = {{"rows", plan.total_rows},
                    {"train_rows", plan.train_rows},
                    {"test_rows", plan.test_rows},
                    {"bad_lines", read.bad_lines},
                    {"iterations_per_epoch", plan.iterations_per_epoch},
                    {"load_seconds", load_seconds}};
  // Training loss of an epoch: all workers' rows together.
  json epochs = json::array();
  double train_seconds = 0;
  uint64_t fingerprint = 0;
  for (size_t e = 0; e < epochs_seen.size(); ++e) {
    double loss_sum = 0;
    uint64_t rows = 0;
    for (const json& node : nodes) {
      if (node.value("role", "") != "worker" || !node.contains("epochs")) continue;
      const json& mine = node["epochs"][e];
      loss_sum += mine.value("loss_sum", 0.0);
      rows += mine.value("rows", uint64_t{0});
    }
    json epoch = epochs_seen[e];
    epoch["train_log_loss"] = rows > 0 ? loss_sum / static_cast<double>(rows) : 0.0;
    epoch["train_rows"] = rows;
    train_seconds += epoch.value("seconds", 0.0);
    epochs.push_back(epoch);
  }
  for (const json& node : nodes) {
    if (node.value("role", "") == "server") fingerprint += node.value("fingerprint", uint64_t{0});
  }
  report["epochs"] = epochs;
  const json& last = epochs.empty() ? json::object() : epochs.back();
  report["final"] = {{"test_log_loss", last.value("test_log_loss", 0.0)},
                     {"test_auc", last.value("test_auc", 0.5)},
                     {"train_log_loss", last.value("train_log_loss", 0.0)}};
  // All training rows per epoch, except the part a resumed job skipped.
  double samples = 0;
  for (const json& epoch : epochs) samples += epoch.value("samples", 0.0);
  report["throughput"] = {
      {"samples", samples},
      {"train_seconds", train_seconds},
      {"samples_per_second", train_seconds > 0 ? samples / train_seconds : 0.0}};
  std::vector<float> pull, compute, push, total;
  for (const IterationTiming& t : trainer.timings()) {
    pull.push_back(t.pull_ms);
    compute.push_back(t.compute_ms);
    push.push_back(t.push_ms);
    total.push_back(t.pull_ms + t.compute_ms + t.push_ms);
  }
  // Worker 0's iterations; the full list only while it stays readable.
  constexpr size_t kMaxListed = 20000;
  report["iterations"] = {{"count", total.size()},
                          {"pull_ms", Summarise(pull)},
                          {"compute_ms", Summarise(compute)},
                          {"push_ms", Summarise(push)},
                          {"total_ms", Summarise(total)}};
  if (total.size() <= kMaxListed) report["iterations"]["each_ms"] = total;
  report["loss_curve"] = loss_curve;
  report["nodes"] = nodes;
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(fingerprint));
  report["model_fingerprint"] = hex;
  report["wall_seconds"] = wall_seconds;
  return report;
}

// A server's bytes received (over ZeroMQ) in each iteration, as seen at the
// end of the iteration's round of the workers' own pushes.
class RoundTraffic {
 public:
  RoundTraffic() : at_round_end_{Received()} {}

  void RoundDone() {
    std::lock_guard<std::mutex> lock(mu_);
    if (at_round_end_.size() <= kMaxRoundsListed) at_round_end_.push_back(Received());
  }

  std::vector<uint64_t> PerRound() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<uint64_t> per_round;
    for (size_t i = 1; i < at_round_end_.size(); ++i) {
      per_round.push_back(at_round_end_[i] - at_round_end_[i - 1]);
    }
    return per_round;
  }

 private:
  static constexpr size_t kMaxRoundsListed = 20000;
  static uint64_t Received() { return ps::Postoffice::Get()->van()->bytes_received(); }

  mutable std::mutex mu_;
  std::vector<uint64_t> at_round_end_;  // the first entry: when the server started
};

void PrintProgress(const WorkerProgress& p, uint32_t epochs, int workers) {
  const ps::Van* van = ps::Postoffice::Get()->van();
  char line[256];
  std::snprintf(line, sizeof(line),
                "epoch %u/%u  iteration %llu/%llu  %.0f samples/s  train log loss %.4f  "
                "sent %.1f MB  received %.1f MB",
                p.epoch, epochs, static_cast<unsigned long long>(p.iteration),
                static_cast<unsigned long long>(p.iterations),
                p.seconds > 0 ? static_cast<double>(p.rows) * workers / p.seconds : 0.0,
                p.rows > 0 ? p.loss_sum / static_cast<double>(p.rows) : 0.0,
                van->bytes_sent() / 1e6, van->bytes_received() / 1e6);
  std::cout << line << std::endl;
}

int RunWorker(const TrainJobConfig& config, const ModelConfig& model_config, NodeReporter* reporter,
              CheckpointCoordinator* checkpoints, Clock::time_point start) {
  const int rank = ps::MyRank();
  const int workers = ps::NumWorkers();
  const bool lead = rank == 0;  // worker 0 also evaluates and reports
  ReadOptions read;
  read.skip_bad_lines = config.skip_bad_lines;
  if (!lead) {
    read.shard = rank;
    read.num_shards = workers;
  }
  ReadStats stats;
  Dataset train = ReadDataset(config.data_path, read, &stats);
  const JobPlan plan = JobPlan::Make(stats.rows, config.test_fraction, workers, config.batch);
  Dataset test;
  if (lead) {
    test = SliceRows(train, plan.train_rows, plan.total_rows);
    train = EveryNthRow(train, 0, workers, plan.train_rows);
  } else {
    TruncateRows(&train, plan.TrainRowsOfWorker(rank));
  }
  const double load_seconds = SecondsSince(start);

  auto model = CreateModel(model_config);
  ps::KVWorker<float> kv(0, 0);
  PsWorkerTrainer trainer(*model, &kv);
  // Iterations already done by the job this one resumes (0 for a fresh job).
  const uint64_t total_iterations = plan.iterations_per_epoch * config.epochs;
  const uint64_t resumed = checkpoints->AgreeOnStart();
  // One push per iteration: the hot path's epochs go on from the resumed one.
  libra::hotpath::ResumeAtEpoch(static_cast<uint32_t>(resumed));
  if (resumed >= total_iterations && resumed > 0) {
    throw CheckpointError("the checkpoint is at iteration " + std::to_string(resumed) +
                          ", but this job has only " + std::to_string(total_iterations));
  }
  std::vector<WorkerEpoch> epochs;
  std::vector<json> epochs_seen;  // worker 0: timings and held-out metrics
  // Worker 0's training loss over time (for plots): the mean log loss of its
  // rows since the previous point, about kCurvePoints points in a run.
  constexpr uint64_t kCurvePoints = 200;
  const uint64_t curve_step =
      std::max<uint64_t>(1, plan.iterations_per_epoch * config.epochs / kCurvePoints);
  json loss_curve = json::array();
  double window_loss = 0, epoch_loss = 0;
  uint64_t window_rows = 0, epoch_rows = 0, iterations_done = 0;
  // Every worker has its rows before any trains: the first iteration (a
  // BSP round) would otherwise wait for the slowest worker's load, 40-90 ms
  // of four workers reading on two cores, and count it as training.
  ps::Postoffice::Get()->Barrier(0, ps::kWorkerGroup);
  const auto train_start = Clock::now();
  auto last_line = Clock::now();
  const uint32_t first_epoch = static_cast<uint32_t>(resumed / plan.iterations_per_epoch) + 1;
  for (uint32_t e = first_epoch; e <= config.epochs; ++e) {
    epoch_loss = 0;
    epoch_rows = 0;
    const uint64_t epoch_base = (e - 1) * plan.iterations_per_epoch;
    const uint64_t first_iteration = e == first_epoch ? resumed - epoch_base : 0;
    epochs.push_back(trainer.RunEpoch(
        e, train, plan.iterations_per_epoch, config.batch,
        [&](const WorkerProgress& p) {
          if (!lead) return;
          // Between this push returning and the next one: see
          // checkpoint_coordinator.h for why this is an iteration boundary.
          const uint64_t done = epoch_base + p.iteration;
          checkpoints->AfterIteration(done, total_iterations);
          if (done == config.stop_after_iteration) {
            std::cout << "worker 0: stopping abruptly after iteration " << done
                      << " (--stop-after-iteration)" << std::endl;
            std::_Exit(3);
          }
          window_loss += p.loss_sum - epoch_loss;
          window_rows += p.rows - epoch_rows;
          epoch_loss = p.loss_sum;
          epoch_rows = p.rows;
          if (++iterations_done % curve_step == 0 && window_rows > 0) {
            loss_curve.push_back({{"seconds", SecondsSince(train_start)},
                                  {"epoch", p.epoch},
                                  {"iteration", p.iteration},
                                  {"train_log_loss", window_loss / window_rows}});
            window_loss = 0;
            window_rows = 0;
          }
          if (SecondsSince(last_line) < config.progress_interval_s) return;
          last_line = Clock::now();
          PrintProgress(p, config.epochs, workers);
        },
        first_iteration));
    if (!lead) continue;
    // Pulls see exactly the state after this epoch's last iteration: the
    // other workers' next pushes wait for ours.
    const auto eval_start = Clock::now();
    const Evaluation test_metrics = trainer.Evaluate(test);
    const WorkerEpoch& mine = epochs.back();
    // A resumed epoch ran only its remaining iterations.
    const double samples = static_cast<double>(plan.train_rows) *
                           static_cast<double>(plan.iterations_per_epoch - first_iteration) /
                           static_cast<double>(plan.iterations_per_epoch);
    const double samples_per_second = samples / mine.seconds;
    epochs_seen.push_back({{"epoch", e},
                           {"seconds", mine.seconds},
                           {"samples", samples},
                           {"samples_per_second", samples_per_second},
                           {"test_log_loss", test_metrics.log_loss},
                           {"test_auc", test_metrics.auc},
                           {"eval_seconds", SecondsSince(eval_start)},
                           {"at_seconds", SecondsSince(train_start)}});
    char line[200];
    std::snprintf(line, sizeof(line),
                  "epoch %u/%u done in %.1f s: %.0f samples/s, held-out log loss %.4f, AUC %.4f", e,
                  config.epochs, mine.seconds, samples_per_second, test_metrics.log_loss,
                  test_metrics.auc);
    std::cout << line << std::endl;
  }

  json mine = json::array();
  for (const WorkerEpoch& e : epochs) {
    mine.push_back(
        {{"epoch", e.epoch}, {"loss_sum", e.loss_sum}, {"rows", e.rows}, {"seconds", e.seconds}});
  }
  const uint64_t train_rows = train.rows();
  reporter->SetDetails([mine, train_rows] {
    return json{{"epochs", mine}, {"train_rows", train_rows}};
  });
  if (!lead) return 0;

  const std::vector<json> nodes = reporter->Gather();
  const json report = BuildReport(config, model_config, plan, stats, nodes, epochs_seen, loss_curve,
                                  trainer, load_seconds, SecondsSince(start));
  if (!config.json_path.empty()) {
    std::ofstream out(config.json_path);
    out << report.dump(2) << "\n";
    if (!out) {
      std::cerr << "libra train: cannot write the report to " << config.json_path << "\n";
      return 1;
    }
  }
  if (config.print_summary) {
    PrintTrainSummary(std::cout, report);
    if (!config.json_path.empty()) std::cout << "report written to " << config.json_path << "\n";
  }
  return 0;
}

// Rewrites the report at `path` (written by the scheduler) with what `add`
// puts in it.
void AmendReport(const std::string& path, const std::function<void(json&)>& add) {
  json report;
  try {
    std::ifstream in(path);
    report = json::parse(in);
  } catch (const std::exception& e) {
    std::cerr << "libra train: cannot read the report " << path << ": " << e.what() << "\n";
    return;
  }
  add(report);
  std::ofstream out(path);
  out << report.dump(2) << "\n";
  if (!out) std::cerr << "libra train: cannot write the report " << path << "\n";
}

// The switch's counters as "switch" (or the reason they could not be read),
// so the report shows the packets that went through it. A switch shared by
// several jobs counts them all.
void AddSwitchCounters(json& report, const std::string& control) {
  try {
    json counters = hotpath::SwitchControlClient(control).Counters();
    counters.erase("ok");
    counters["control"] = control;
    report["switch"] = counters;
  } catch (const std::exception& e) {
    std::cerr << "libra train: cannot read the switch's counters at " << control << ": " << e.what()
              << "\n";
    report["switch"] = {{"control", control}, {"error", e.what()}};
  }
}

// The CPU seconds every process of the job used, as "processes" (a switch
// started for the job as "switchd"): on a machine with few cores, what the
// two paths cost in CPU bounds their speed as much as the links do.
void AddProcessCpu(json& report, const std::vector<ProcessUsage>& usage, double switch_cpu) {
  json processes = json::array();
  for (const ProcessUsage& u : usage) {
    processes.push_back({{"name", u.name},
                         {"cpu_seconds", u.user_seconds + u.system_seconds},
                         {"wall_seconds", u.wall_seconds}});
  }
  if (switch_cpu > 0) processes.push_back({{"name", "switchd"}, {"cpu_seconds", switch_cpu}});
  report["processes"] = processes;
}

// The model's predicted speedup beside the measured one: worker 0's median
// iteration while the job sampled (on the plain PS) over its median once the
// hot path ran, leaving out the first iteration and the two around the
// switch-over (the JOIN, the first hot epoch). Null where too few
// iterations ran on either side.
json SpeedupCheck(const json& report, const json& model, size_t first_hot) {
  const json each = report.value("iterations", json::object()).value("each_ms", json::array());
  std::vector<double> plain, hot;
  for (size_t i = 0; i < each.size(); ++i) {
    if (i >= 1 && i < first_hot) plain.push_back(each[i].get<double>());
    if (i >= first_hot + 2) hot.push_back(each[i].get<double>());
  }
  const double predicted_libra = model.value("libra_seconds_per_epoch", 0.0);
  json out = {
      {"predicted",
       predicted_libra > 0 ? model.value("plain_seconds_per_epoch", 0.0) / predicted_libra : 0.0},
      {"measured", nullptr},
      {"measured_as",
       "worker 0's median iteration while sampling (plain) over its median "
       "on the hot path"}};
  if (plain.size() >= 2 && hot.size() >= 2) {
    const double hot_median = hot::UpperMedian(std::move(hot));
    if (hot_median > 0) out["measured"] = hot::UpperMedian(std::move(plain)) / hot_median;
  }
  return out;
}

// The cost model's per-epoch prediction (the scheduler's
// hot_path.cost_model) beside what the hot epochs measured, as
// "cost_model_check": packets through the switch (in and out), and at the
// servers the values read, COLLECTs and UPDATEs, so the model can be
// checked. Nothing when the model kept no key or no epoch ran hot.
void AddCostModelCheck(json& report) {
  json model;
  double epochs = 0;
  double collects = 0, updates = 0, written = 0;
  size_t first_hot = 0;
  for (const json& node : report.value("nodes", json::array())) {
    const json hot = node.value("hot_path", json::object());
    const std::string role = node.value("role", "");
    if (role == "scheduler") model = hot.value("cost_model", json());
    if (role == "worker" && node.value("rank", -1) == 0) {
      epochs = hot.value("epochs_hot", 0.0);
      first_hot = hot.value("first_hot_epoch", 0);
    }
    if (role == "server") {
      const json collector = hot.value("collector", json::object());
      collects += collector.value("collect_packets", 0.0);
      updates += collector.value("update_packets", 0.0);
      written += collector.value("written_values", 0.0);
    }
  }
  if (!model.is_object() || model.value("keys", 0) == 0 || epochs <= 0) return;
  const json events = report.value("switch", json::object()).value("events", json::object());
  const double switch_packets = events.value("packets_in", 0.0) + events.value("packets_out", 0.0);
  auto pair = [&](const char* predicted, double measured) {
    return json{{"predicted", model.value(predicted, 0.0)}, {"measured", measured / epochs}};
  };
  report["cost_model_check"] = {
      {"hot_epochs", epochs},
      {"speedup", SpeedupCheck(report, model, first_hot)},
      {"switch_packets_per_epoch", pair("libra_switch_packets_per_epoch", switch_packets)},
      {"written_values_per_epoch", pair("written_values_per_epoch", written)},
      {"collect_packets_per_epoch", pair("collect_packets_per_epoch", collects)},
      {"update_packets_per_epoch", pair("update_packets_per_epoch", updates)}};
}

// Runs the job's processes and adds their CPU (and, with the hot path, the
// switch's counters and CPU, and the cost model's check) to its report.
int RunLocalJob(const LocalJob& job, const TrainJobConfig& config,
                const LocalSwitchd* local_switch) {
  RunOptions options;
  options.timeout_s = config.timeout_s;
  std::vector<ProcessUsage> usage;
  const int status = RunProcesses(LocalJobProcesses(job), options, &usage);
  if (status != 0) return status;
  const double switch_cpu = local_switch ? CpuSecondsOf(local_switch->pid()) : 0;
  AmendReport(config.json_path, [&](json& report) {
    AddProcessCpu(report, usage, switch_cpu);
    if (config.libra.enabled()) {
      AddSwitchCounters(report, config.libra.switch_control);
      AddCostModelCheck(report);
    }
  });
  return status;
}

// Exact enough to give back the same float or double when parsed.
std::string Text(double value) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.17g", value);
  return buf;
}

// Checkpoints need the iteration order and parameter layout of the job that
// wrote them: these settings fix both (the data file and --epochs may change).
uint64_t JobSignature(const TrainJobConfig& c, const ModelConfig& model) {
  const OptimizerConfig& o = c.optimizer;
  return HashText(ModelKindName(model.kind) + " dim " + std::to_string(model.embedding_dim) +
                  " fields " + std::to_string(model.num_fields) + " seed " +
                  std::to_string(model.seed) + " " + OptimizerKindName(o.kind) + " lr " +
                  Text(o.learning_rate) + " l1 " + Text(o.l1) + " l2 " + Text(o.l2) + " workers " +
                  std::to_string(ps::NumWorkers()) + " servers " +
                  std::to_string(ps::NumServers()) + " batch " + std::to_string(c.batch) +
                  " test " + Text(c.test_fraction));
}

// Throws std::invalid_argument for checkpoint flags that do not go together.
void CheckCheckpointOptions(const TrainJobConfig& c) {
  const bool wanted = c.checkpoint_every > 0 || c.resume;
  if (wanted && c.checkpoint_dir.empty()) {
    throw std::invalid_argument("--checkpoint-every and --resume need --checkpoint-dir");
  }
}

}  // namespace

uint32_t NumFieldsOf(const std::string& path) {
  switch (DetectFormat(path)) {
    case DataFormat::kCriteo:
      return kCriteoFields;
    case DataFormat::kLibsvm:
      return 1;
    case DataFormat::kBinaryCache:
      break;
  }
  return ReadDataset(path).num_fields;
}

std::vector<std::string> TrainNodeCommand(const std::string& self, const TrainJobConfig& c) {
  const std::pair<const char*, std::string> flags[] = {
      {"--data", c.data_path},
      {"--model", ModelKindName(c.model.kind)},
      {"--embedding-dim", std::to_string(c.model.embedding_dim)},
      {"--num-fields", std::to_string(c.model.num_fields)},
      {"--optimizer", OptimizerKindName(c.optimizer.kind)},
      {"--lr", Text(c.optimizer.learning_rate)},
      {"--l1", Text(c.optimizer.l1)},
      {"--l2", Text(c.optimizer.l2)},
      {"--epochs", std::to_string(c.epochs)},
      {"--batch", std::to_string(c.batch)},
      {"--seed", std::to_string(c.model.seed)},
      {"--test-fraction", Text(c.test_fraction)},
      {"--progress-interval", Text(c.progress_interval_s)},
  };
  std::vector<std::string> args{self, "train"};
  for (const auto& [flag, value] : flags) {
    args.push_back(flag);
    args.push_back(value);
  }
  if (c.skip_bad_lines) args.push_back("--skip-bad-lines");
  if (!c.print_summary) args.push_back("--no-summary");
  if (!c.json_path.empty()) {
    args.push_back("--json");
    args.push_back(c.json_path);
  }
  if (!c.checkpoint_dir.empty()) {
    args.insert(args.end(), {"--checkpoint-dir", c.checkpoint_dir, "--checkpoint-every",
                             std::to_string(c.checkpoint_every)});
  }
  if (c.resume) args.push_back("--resume");
  if (c.stop_after_iteration > 0) {
    args.insert(args.end(), {"--stop-after-iteration", std::to_string(c.stop_after_iteration)});
  }
  return args;
}

int RunTrainNode(const TrainJobConfig& config) {
  const auto start = Clock::now();
  ModelConfig model = config.model;
  try {
    if (model.num_fields == 0) model.num_fields = NumFieldsOf(config.data_path);
    // Fail on a bad configuration before joining the job.
    CreateModel(model);
    CreateOptimizer(config.optimizer);
    CheckCheckpointOptions(config);
  } catch (const std::exception& e) {
    std::cerr << "libra train: " << e.what() << "\n";
    return 1;
  }
  CheckpointSettings checkpoint_settings{config.checkpoint_dir, config.checkpoint_every,
                                         config.resume, 0};
  ps::Start(0);
  checkpoint_settings.job_signature = JobSignature(config, model);
  int status = 0;
  {
    NodeReporter reporter;
    std::unique_ptr<CheckpointCoordinator> checkpoints;
    RoundTraffic traffic;
    std::unique_ptr<SyncOptimizerServer> store;
    std::unique_ptr<ps::KVServer<float>> server;
    if (ps::IsServer()) {
      store = std::make_unique<SyncOptimizerServer>(model, config.optimizer,
                                                    static_cast<uint32_t>(ps::NumWorkers()));
      store->set_on_worker_round([&traffic] { traffic.RoundDone(); });
      server = std::make_unique<ps::KVServer<float>>(0);
      store->Serve(server.get());
      checkpoints = std::make_unique<CheckpointCoordinator>(checkpoint_settings, store.get());
      reporter.SetDetails([&store, &traffic] {
        const SyncServerStats s = store->stats();
        return json{{"rounds", s.rounds},
                    {"pushes", s.pushes},
                    {"pulls", s.pulls},
                    {"keys_updated", s.keys_updated},
                    {"parameters", s.parameters},
                    {"malformed_pushes", s.malformed_pushes},
                    {"deferred_pushes", s.deferred_pushes},
                    {"switch_rounds", s.switch_rounds},
                    {"switch_keys_updated", s.switch_keys_updated},
                    {"switch_keys_untouched", s.switch_keys_untouched},
                    {"bytes_received_by_round", traffic.PerRound()},
                    {"fingerprint", store->Fingerprint()}};
      });
    } else if (ps::IsScheduler()) {
      reporter.SetDetails([] { return json::object(); });
    } else {
      try {
        checkpoints = std::make_unique<CheckpointCoordinator>(checkpoint_settings, nullptr);
        status = RunWorker(config, model, &reporter, checkpoints.get(), start);
      } catch (const std::exception& e) {
        std::cerr << "libra train: worker " << ps::MyRank() << ": " << e.what() << "\n";
        return 1;  // without Finalize: the others learn of it and stop
      }
    }
    ps::Finalize(0, true);
  }
  return status;
}

int LaunchLocalTraining(TrainJobConfig config, const std::string& self) {
  if (config.json_path.empty()) {
    std::cerr << "libra train: a local job needs a report path\n";
    return 1;
  }
  JobPlan plan;
  try {
    config.libra.Validate();
    CheckCheckpointOptions(config);
    // The nodes run in this directory too, but say exactly which one.
    if (!config.checkpoint_dir.empty()) {
      config.checkpoint_dir = std::filesystem::absolute(config.checkpoint_dir).string();
    }
    ReadOptions read;
    read.skip_bad_lines = config.skip_bad_lines;
    ReadStats stats;
    const Dataset data = ReadDataset(config.data_path, read, &stats);
    if (!stats.cache_problem.empty()) {
      std::cout << "rebuilt the data cache from the text: " << stats.cache_problem << "\n";
    }
    if (config.model.num_fields == 0) config.model.num_fields = data.num_fields;
    if (stats.bad_lines > 0) {
      std::cout << "skipping " << stats.bad_lines << " bad lines (first: " << stats.first_bad_line
                << ")\n";
    }
    plan = JobPlan::Make(stats.rows, config.test_fraction, config.workers, config.batch);
    if (plan.train_rows == 0 || plan.test_rows == 0) {
      std::cerr << "libra train: " << config.data_path << ": " << stats.rows
                << " rows with --test-fraction " << config.test_fraction << " leave "
                << plan.train_rows << " training and " << plan.test_rows
                << " held-out rows; both must be non-empty\n";
      return 1;
    }
    std::cout << "training " << ModelKindName(config.model.kind) << " on " << config.data_path
              << ": " << plan.train_rows << " training rows, " << plan.test_rows << " held out; "
              << config.workers << " worker(s) x batch " << config.batch << ", " << config.servers
              << " server(s), " << OptimizerKindName(config.optimizer.kind) << "\n";
    CreateModel(config.model);
    CreateOptimizer(config.optimizer);
  } catch (const std::exception& e) {
    std::cerr << "libra train: " << e.what() << "\n";
    return 1;
  }
  config.print_summary = false;
  LocalJob job;
  job.num_servers = config.servers;
  job.num_workers = config.workers;
  job.command = TrainNodeCommand(self, config);
  job.secure = config.secure;
  if (!config.libra.enabled()) return RunLocalJob(job, config, nullptr);

  LibraOptions& libra = config.libra;
  std::unique_ptr<LocalSwitchd> local_switch;
  if (libra.local_switch) {
    try {
      local_switch = std::make_unique<LocalSwitchd>(self);
    } catch (const std::exception& e) {
      std::cerr << "libra train: " << e.what() << "\n";
      return 1;
    }
    libra.switch_address = local_switch->data_address();
    libra.switch_control = local_switch->control_address();
  }
  // The nodes run in this directory too, but say exactly which file.
  if (!libra.hot_set_path.empty()) {
    libra.hot_set_path = std::filesystem::absolute(libra.hot_set_path).string();
  }
  const uint64_t pushes_per_worker = plan.iterations_per_epoch * config.epochs;
  job.env = LibraEnvironment(libra, libra.switch_address, libra.switch_control, pushes_per_worker);
  if (!config.checkpoint_dir.empty()) {
    // The hot path's decision is part of the checkpoints: a resumed job must
    // aggregate the same keys at the same scale from the same epoch.
    const std::string saved = config.checkpoint_dir + "/hot-path.install";
    job.env["LIBRA_SAVE_INSTALL"] = saved;
    if (config.resume && std::filesystem::exists(saved)) {
      job.env["LIBRA_INSTALL_FILE"] = saved;
      std::cout << "libra: resuming with the hot path of " << saved << "\n";
    }
  }
  std::cout << "libra: switch " << libra.switch_address << " (control " << libra.switch_control
            << (local_switch ? ", started for this job)" : ")") << "; ";
  if (libra.hot_set_path.empty()) {
    const auto phase = static_cast<uint32_t>(std::stoul(job.env["LIBRA_SAMPLE_EPOCHS"]));
    const uint32_t counted = hotpath::HotPathConfig::CountedOf(phase);
    std::cout << "hot set sampled from the first " << counted << " of " << pushes_per_worker
              << " pushes per worker";
    if (phase > counted) std::cout << ", chosen during the next " << phase - counted;
    std::cout << "\n";
  } else {
    std::cout << "hot set from " << libra.hot_set_path << "\n";
  }
  return RunLocalJob(job, config, local_switch.get());
}

}  // namespace libra::train
