// The offline profiler: finds the hot set from a sample of the training data
// and measures how good the choice and its placement are.
//
// Training runs in epochs: in each epoch every one of `workers` workers pushes
// the distinct keys of its next `batch_size` rows. One *update* is one key in
// one push (times the key's value length, for value updates). The profiler
// counts updates over a sample of whole epochs spread across the data,
// chooses the hot set under the switch capacity, places it, and then, from
// the whole data, reports how much of all updates the choice receives next to
// the best possible choice, and how packing behaves when the sampled epochs
// are replayed.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <span>

#include "libra/hot_counter.h"
#include "libra/hot_set.h"
#include "libra/packing.h"

namespace libra::hot {

// The keys of a sparse data set in CSR form: row r has keys
// [row_begin[r], row_begin[r + 1]).
struct SparseRows {
  std::span<const uint64_t> row_begin;
  std::span<const Key> keys;
  size_t rows() const { return row_begin.empty() ? 0 : row_begin.size() - 1; }
};

struct ProfileOptions {
  double sample_fraction = 0.05;
  uint64_t capacity_cells = 0;  // 0: the whole switch layout
  uint64_t min_frequency = 0;   // in sampled updates
  uint32_t value_len = 1;       // values per key (embedding dimension; 1 for LR)
  uint32_t batch_size = 1000;   // rows per worker per epoch
  uint32_t workers = 4;
  uint64_t seed = 1;  // picks the sampled epochs
  size_t counter_memory_budget = UpdateCounter::kDefaultMemoryBudget;
  SwitchLayout layout;
  bool evaluate = true;  // count the whole data for coverage and recall
};

// Packing of the sampled epochs' hot values by one placement and packer.
struct ReplayMetrics {
  PackingStats total;
  uint64_t epochs = 0;
  double packets_per_epoch() const { return epochs ? double(total.packets) / epochs : 0.0; }
  double conflicts_per_epoch() const { return epochs ? double(total.conflicts) / epochs : 0.0; }
};

struct ProfileReport {
  // The data and the sample.
  uint64_t rows = 0;
  uint64_t epochs = 0;
  uint64_t sampled_epochs = 0;
  uint64_t sampled_rows = 0;
  uint64_t sampled_updates = 0;
  uint64_t sampled_distinct_keys = 0;  // tracked by the counter
  bool counter_exact = true;
  uint64_t counter_error_bound = 0;

  // The choice.
  uint64_t capacity_cells = 0;
  uint64_t hot_keys = 0;
  uint64_t hot_values = 0;
  double seconds_profiling = 0;  // sampling, counting, choosing and placing

  // Against the whole data (when evaluated).
  bool evaluated = false;
  uint64_t total_updates = 0;  // value updates
  uint64_t distinct_keys = 0;
  uint64_t optimal_hot_keys = 0;
  double sampled_coverage = 0;
  double optimal_coverage = 0;
  double coverage_ratio = 0;
  double recall = 0;  // share of the optimal set's keys the sampled set has
  double seconds_evaluating = 0;

  // Replay of the sampled epochs.
  ReplayMetrics heat_layout_aware;
  ReplayMetrics hash_naive;
  double conflict_reduction = 0;  // 1 - conflicts(heat+layout) / conflicts(hash+naive)
};

struct ProfileResult {
  HotSet hot_set;  // heat placement, ready to install
  ProfileReport report;
};

// Throws std::invalid_argument for bad options.
ProfileResult ProfileHotParameters(const SparseRows& data, const ProfileOptions& options);

nlohmann::json ToJson(const ProfileReport& report);

}  // namespace libra::hot
