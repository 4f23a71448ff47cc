// `libra train` as a job: the configuration every node shares, the node's
// part (server: SyncOptimizerServer; worker: PsWorkerTrainer; worker 0 also
// evaluates and writes the report) and the local launch of a whole job.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "train/libra_options.h"
#include "train/model.h"
#include "train/optimizer.h"

namespace libra::train {

struct TrainJobConfig {
  std::string data_path;
  ModelConfig model;  // num_fields: 0 means "from the data file"
  OptimizerConfig optimizer;
  uint32_t epochs = 1;
  uint32_t batch = 1000;  // per worker; an iteration covers workers * batch rows
  double test_fraction = 0.1;
  bool skip_bad_lines = false;
  std::string json_path;  // worker 0 writes the report here ("" for none)
  double progress_interval_s = 2.0;
  bool print_summary = true;  // worker 0 prints the summary table at the end
  // Local launch only (a node learns the job's size from DMLC_* and the
  // hot path from LIBRA_*, which the launcher sets from these).
  int workers = 1;
  int servers = 1;
  double timeout_s = 0;  // 0: no limit
  bool secure = true;    // a PS_JOB_SECRET for the job's ZeroMQ connections (LocalJob)
  LibraOptions libra;
  // Checkpoints (checkpoint_coordinator.h): every server writes its shard to
  // checkpoint_dir after every checkpoint_every iterations; with resume the
  // job starts after the newest checkpoint every server has.
  std::string checkpoint_dir;
  uint64_t checkpoint_every = 0;
  bool resume = false;
  // Tests only: worker 0 exits abruptly (status 3) after this many
  // iterations since the job's start, as if the job crashed (0: never).
  uint64_t stop_after_iteration = 0;
};

// The argument list that runs one node of `config`'s job: `self train ...`,
// with the flags of tools/libra/cmd_train.cpp.
std::vector<std::string> TrainNodeCommand(const std::string& self, const TrainJobConfig& config);

// Plays this process's part (DMLC_ROLE) in the job. Returns an exit code;
// errors are printed to stderr.
int RunTrainNode(const TrainJobConfig& config);

// Reads the data once (building its binary cache, so the nodes load it at
// disk speed, and checking it before any process starts), then runs the
// scheduler, servers and workers on this machine. `self` is the path of the
// `libra` binary. The nodes print progress but no summary: the caller prints
// one from the report at config.json_path, which must be set. With Libra on
// (config.libra), every node gets the LIBRA_* variables, a local switchd is
// started for the job if asked for (and stopped after it), and the switch's
// counters are added to the report as "switch". Returns the job's exit code.
int LaunchLocalTraining(TrainJobConfig config, const std::string& self);

// The number of fields of the data set at `path` (DeepFM's MLP input).
uint32_t NumFieldsOf(const std::string& path);

}  // namespace libra::train
