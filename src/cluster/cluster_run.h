// One training job on a fresh emulated cluster (NetnsCluster): a namespace
// for the scheduler, each server and each worker, links shaped to one rate,
// and, for a Libra run, `libra switchd` in the switch's namespace. What both
// `libra bench cluster` and `libra demo --network emulated` run, and the
// figures they read off a run's result.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "train/train_job.h"

namespace libra::cluster {

struct ClusterJob {
  train::TrainJobConfig config;  // json_path: where worker 0 writes its report
  // The hot set's file; "": plain parameter server, unless `sample` (then
  // the workers sample the hot set as config.libra says).
  std::string hot_set_path;
  uint64_t pushes_per_worker = 0;
  std::string tag;  // the run's log file: out_dir/tag.log
  bool sample = false;
};

struct ClusterRunOptions {
  std::string out_dir;  // for the log
  double rate_mbit = 20;
  double loss_percent = 0;
  bool host_band = true;  // LinkShape::host_band
  bool port_band = true;  // LinkShape::port_band
  double run_timeout_s = 600;
  bool verbose = false;  // echo the nodes' output instead of logging it
  // The switch's back end: "model" or "xdp" (the XDP program attached to
  // every host's port in the switch's namespace, links set up for it:
  // LinkShape::xdp_switch).
  std::string dataplane = "model";
  std::vector<std::string> switchd_flags;  // more switchd flags, e.g. --die-at-epoch 40
  // When the switch process ends during the run, start one again in its
  // place (its ports, without switchd_flags), as an operator would.
  bool restart_switch = false;
};

// Runs `job` on a cluster built for it and removed afterwards. Returns its
// measurements: status, wall_seconds, cpu (per process, switchd included),
// links (bytes and shaper drops per host), switch (its counters, Libra
// only; dataplane: the back end that ran, switch_restarts) and, from worker 0's report,
// train_seconds, samples_per_second, epochs, final, model_fingerprint,
// iteration_ms (each of its iterations) and hot_overlap; "error" says
// what failed. Status 130 means the run was interrupted (Ctrl-C).
nlohmann::json RunOnCluster(const ClusterJob& job, const ClusterRunOptions& options,
                            const std::string& self);

// The overlap U of a Libra run (speedup_bound.h) from worker 0's report:
// the hot values the servers received from the switch over the hot values
// one worker pushed, on average. None for a run without the hot path.
std::optional<double> HotOverlap(const nlohmann::json& train_report);

// Libra's speedup over the plain PS once both run, from worker 0's
// iterations (RunOnCluster's iteration_ms) after the first: the per-iteration
// speedup the bound (speedup_bound.h) predicts, without the one-time start,
// where Libra's workers wait at their first push for the INSTALL, which
// comes after the last worker's JOIN. None unless both ran the same
// iterations, at least two.
std::optional<double> SteadySpeedup(const nlohmann::json& plain, const nlohmann::json& libra);

// Seconds until the first epoch whose held-out loss is at most `target`
// (null if none reached it).
nlohmann::json TimeToLoss(const nlohmann::json& run, double target);

// Bytes into and out of the servers' links of a run, summed.
std::pair<double, double> ServerLinkBytes(const nlohmann::json& run);

// CPU seconds of every process of a run over its wall time.
double TotalCpuShare(const nlohmann::json& run);

// Held-out log loss and AUC of a plain and a Libra run must agree this
// closely to count as the same quality (the switch sums in fixed point, so
// the models agree to that precision rather than bit for bit).
constexpr double kQualityTolerance = 1e-4;

// Sets, in `pair`, Libra's run (pair["libra"]) against the plain one
// (pair["plain"]), both results of RunOnCluster that finished: speedup,
// bound (speedup_bound.h, from `hot_share`), bound_with_overlap,
// speedup_over_bound, steady_speedup (SteadySpeedup) and steady_over_bound
// (over bound_with_overlap, or bound without it), test_log_loss_gap, test_auc_gap, same_quality,
// target_loss (`target_loss`, or with 0 the plain run's final loss plus the
// tolerance) and both runs' seconds to reach it.
void CompareRuns(int workers, int servers, double hot_share, double target_loss,
                 nlohmann::json& pair);

// One round of a configuration, out of a pair CompareRuns filled: both
// runs' samples/s, speedup and (where known) steady_speedup.
nlohmann::json RoundOf(const nlohmann::json& pair);

// A configuration's rounds (RoundOf each) summed up: for speedup and
// steady_speedup, the median (the upper one of an even count), min and max
// over the rounds that have it.
nlohmann::json SummariseRounds(const nlohmann::json& rounds);

}  // namespace libra::cluster
