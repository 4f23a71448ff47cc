// `libra train`: trains a sparse CTR model on the parameter server.
//
// Run by a user, it starts a local job (scheduler, --servers servers,
// --workers workers) whose nodes are this same binary with the same flags.
// Given the DMLC_* variables (DMLC_ROLE set), it is one node of a job, local
// or across machines; a node takes Libra's settings from the LIBRA_*
// variables, which the local launcher sets from the Libra flags. See
// docs/training.md.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "train/train_job.h"
#include "train/train_report.h"

namespace libra::tool {
namespace {

int RunTrain(train::TrainJobConfig config) {
  if (std::getenv("DMLC_ROLE") != nullptr) return train::RunTrainNode(config);
  const bool temporary_report = config.json_path.empty();
  if (temporary_report) {
    config.json_path = (std::filesystem::temp_directory_path() /
                        ("libra-train-" + std::to_string(getpid()) + ".json"))
                           .string();
  }
  const int status = train::LaunchLocalTraining(config, SelfPath());
  if (status == 0) {
    try {
      std::ifstream in(config.json_path);
      train::PrintTrainSummary(std::cout, nlohmann::json::parse(in));
      if (!temporary_report) std::cout << "report written to " << config.json_path << "\n";
    } catch (const std::exception& e) {
      std::cerr << "libra train: cannot read the report " << config.json_path << ": " << e.what()
                << "\n";
      return 1;
    }
  }
  if (temporary_report) std::remove(config.json_path.c_str());
  return status;
}

}  // namespace

void AddTrainCommand(CLI::App& parent, Runner& run) {
  auto config = std::make_shared<train::TrainJobConfig>();
  CLI::App* sub = parent.add_subcommand(
      "train", "Train LR/FM/DeepFM on the parameter server (synchronous), local or as a node");
  sub->add_option("--data", config->data_path, "Training data (libsvm, Criteo TSV or cache)")
      ->required();
  const std::map<std::string, train::ModelKind> models{
      {"lr", train::ModelKind::kLogisticRegression},
      {"fm", train::ModelKind::kFactorizationMachine},
      {"deepfm", train::ModelKind::kDeepFm}};
  sub->add_option("--model", config->model.kind, "lr, fm or deepfm")
      ->transform(CLI::CheckedTransformer(models, CLI::ignore_case))
      ->default_str("lr");
  const std::map<std::string, train::OptimizerKind> optimizers{
      {"sgd", train::OptimizerKind::kSgd},
      {"adagrad", train::OptimizerKind::kAdagrad},
      {"ftrl", train::OptimizerKind::kFtrl}};
  sub->add_option("--optimizer", config->optimizer.kind, "sgd, adagrad or ftrl")
      ->transform(CLI::CheckedTransformer(optimizers, CLI::ignore_case))
      ->default_str("adagrad");
  sub->add_option("--lr", config->optimizer.learning_rate, "Learning rate (FTRL: alpha)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sub->add_option("--l1", config->optimizer.l1, "L1 strength (FTRL)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--l2", config->optimizer.l2, "L2 strength")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--workers,-w", config->workers, "Workers of the local job")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  sub->add_option("--servers,-s", config->servers, "Servers of the local job")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  sub->add_option("--epochs", config->epochs, "Passes over the training rows")
      ->capture_default_str()
      ->check(CLI::Range(1u, 100000u));
  sub->add_option("--batch", config->batch,
                  "Rows per worker per iteration (an iteration covers workers x batch rows)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 10'000'000u));
  sub->add_option("--embedding-dim", config->model.embedding_dim, "FM/DeepFM embedding size")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1024u));
  sub->add_option("--num-fields", config->model.num_fields, "DeepFM fields (0: from the data file)")
      ->default_val(0u);
  sub->add_option("--seed", config->model.seed, "Seed of the initial parameters")
      ->capture_default_str();
  sub->add_option("--test-fraction", config->test_fraction,
                  "Share of rows (the end of the file) held out for evaluation")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 0.9));
  sub->add_flag("--skip-bad-lines", config->skip_bad_lines, "Count and skip malformed lines");
  sub->add_option("--json", config->json_path, "Write the JSON report here");
  sub->add_option("--progress-interval", config->progress_interval_s,
                  "Seconds between progress lines")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--timeout", config->timeout_s,
                  "Stop a local job after this many seconds (0: never)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  sub->add_flag(
      "--insecure", [config](std::int64_t) { config->secure = false; },
      "A local job's ZeroMQ connections without CURVE (no PS_JOB_SECRET)");
  train::LibraOptions& libra = config->libra;
  sub->add_flag("--libra", libra.local_switch,
                "Aggregate hot keys in a libra switchd started on 127.0.0.1 for this job");
  sub->add_option("--switch", libra.switch_address,
                  "Use the switchd whose UDP data address is IP:PORT (with --switch-control)");
  sub->add_option("--switch-control", libra.switch_control, "That switchd's control IP:PORT");
  sub->add_option("--hot-set", libra.hot_set_path,
                  "Hot-set file (libra profile --out); without it the hot set is sampled")
      ->check(CLI::ExistingFile);
  sub->add_option("--sample", libra.sample_fraction,
                  "Share of each worker's pushes sampled before the hot path starts")
      ->capture_default_str()
      ->check(CLI::Range(1e-6, 1.0));
  sub->add_option("--capacity", libra.capacity,
                  "Hot set when sampling: auto (the set the cost model predicts pays on these "
                  "links, maybe none) or a number of switch cells (0: the whole switch)")
      ->capture_default_str();
  sub->add_option("--link-mbit", libra.link_mbit,
                  "Every host's link speed in Mbit/s, for the cost model (default: unknown, "
                  "taken as 10 Gbit/s)");
  sub->add_option("--plain-epoch", libra.plain_epoch,
                  "The cost model's plain epoch: measured (timed while sampling) or predicted "
                  "(at --link-mbit: to plan for other links than these)")
      ->capture_default_str()
      ->check(CLI::IsMember({"measured", "predicted"}));
  sub->add_option("--job-token", libra.job_token, "The job's token on the switch");
  sub->add_option("--checkpoint-dir", config->checkpoint_dir,
                  "Servers write checkpoints of their shards here (one file per server)");
  sub->add_option("--checkpoint-every", config->checkpoint_every,
                  "Write a checkpoint after every K iterations (with --checkpoint-dir)")
      ->capture_default_str();
  sub->add_flag("--resume", config->resume,
                "Continue after the newest checkpoint in --checkpoint-dir that every server has");
  sub->add_option("--stop-after-iteration", config->stop_after_iteration,
                  "Tests: worker 0 exits abruptly after this iteration")
      ->group("");
  sub->add_flag(
      "--no-summary", [config](int64_t) { config->print_summary = false; },
      "Worker 0 prints no summary table (set for the nodes of a local job)");
  auto realtime = std::make_shared<bool>(false);
  sub->add_flag("--realtime", *realtime,
                "Run the job's processes under SCHED_FIFO (root): a woken thread runs at once "
                "instead of waiting for its core (docs/PERFORMANCE.md, \"A forced set\")");
  sub->callback([&run, config, realtime] {
    run = [config, realtime] {
      if (*realtime && !EnterRealtime("libra train")) return 2;
      return RunTrain(*config);
    };
  });
}

}  // namespace libra::tool
