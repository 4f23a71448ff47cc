// The hot set of a training job, chosen before it starts (what `libra demo`
// gives the Libra run as its hot-set file): the offline profiler run over the
// job's training rows in parameter keys (ParameterKeyOf, the keys workers
// push), plus the model's dense keys, which every worker pushes in every
// iteration. Also measures, over one epoch of the job's real pushes (worker
// i pushes the distinct keys of its next `batch` rows of shard i), how often
// each key is updated and what share of the updates the hot set takes: the
// share of pushed values that bypass the servers.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "data/dataset.h"
#include "hot/cost_model.h"
#include "hot/hot_profiler.h"
#include "hot/hot_set.h"
#include "train/model.h"

namespace libra::train {

struct TrainingHotSetOptions {
  uint64_t capacity_cells = 30000;
  double sample_fraction = 0.05;
  uint32_t workers = 4;
  uint32_t batch = 1000;  // rows per worker per iteration
  uint64_t seed = 1;
  double min_pushes_per_epoch = 0;  // see hot::ProfileOptions
  // Keep only the prefix of the chosen keys that the cost model
  // (hot/cost_model.h) predicts pays on links of `link_mbit` (0: unknown)
  // with `servers` servers; maybe none (an empty hot set).
  bool choose_by_cost = false;
  uint32_t servers = 1;
  uint64_t link_mbit = 0;
  double shared_cores = 0;  // the cores every node and the switch share (0: own CPUs)
  // A plain epoch (iteration) of this job as measured, as the controller's
  // sampling phase measures it (hot::CostInput); 0: unknown.
  double measured_plain_epoch_s = 0;
};

struct TrainingHotSet {
  hot::HotSet hot_set;         // heat placement, dense keys included
  hot::ProfileReport profile;  // the profiler's figures (feature keys only)
  uint64_t hot_dense_keys = 0;
  // Over one epoch of the job's pushes, dense keys included.
  uint64_t pushes = 0;           // worker pushes with at least one row
  uint64_t key_updates = 0;      // keys carried, summed over the pushes
  uint64_t hot_key_updates = 0;  // of which hot
  uint64_t distinct_keys = 0;    // feature keys pushed at least once
  // Update counts of feature keys by rank (1 = most updated), at about 200
  // ranks spread evenly on a log scale, the last rank included.
  std::vector<std::pair<uint64_t, uint64_t>> updates_by_rank;
  uint64_t hot_feature_keys = 0;  // the hot cut-off, as a rank
  // With choose_by_cost: the model's verdict and its prediction for the set;
  // a forced set on links of a known rate: the prediction for it.
  std::string cost_why;
  hot::CostPrediction cost;

  double hot_update_share() const {
    return key_updates ? static_cast<double>(hot_key_updates) / key_updates : 0.0;
  }
};

// `train` holds the training rows only (not the held-out ones). Throws
// std::invalid_argument for bad options.
TrainingHotSet FindTrainingHotSet(const Dataset& train, const Model& model,
                                  const TrainingHotSetOptions& options);

}  // namespace libra::train
