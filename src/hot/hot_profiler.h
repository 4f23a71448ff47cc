// The offline profiler: finds the hot set from a sample of the training data
// and measures how good the choice and its placement are.
//
// Training runs in epochs: in each epoch every one of `workers` workers pushes
// the distinct keys of its next `batch_size` rows. One *update* is one key in
// one push (times the key's value length, for value updates). The profiler
// works in three steps, so that only the last needs all the data:
//
//   1. sample whole epochs spread across the data (SampleEpochs here, from
//      rows in memory; SampleDataFile in hot_file_sample.h, reading only the
//      sampled part of a file);
//   2. ProfileSample: count the sample's updates, choose the hot set under
//      the switch capacity, place it, and replay the sampled epochs through
//      the packers;
//   3. optionally EvaluateCoverage: count the whole data exactly and report
//      how much of all updates the choice receives next to the best possible
//      choice.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <span>
#include <string>
#include <vector>

#include "hot/hot_set.h"
#include "hot/packing.h"
#include "hot/update_counter.h"

namespace libra::hot {

// The keys of a sparse data set in CSR form: row r has keys
// [row_begin[r], row_begin[r + 1]).
struct SparseRows {
  std::span<const uint64_t> row_begin;
  std::span<const Key> keys;
  size_t rows() const { return row_begin.empty() ? 0 : row_begin.size() - 1; }
};

// Whole epochs of a data set, back to back: sample row r has the keys
// [row_begin[r], row_begin[r + 1]) and sampled epoch e is the sample rows
// [epoch_begin[e], epoch_begin[e + 1]), consecutive rows of the data.
struct EpochSample {
  std::vector<uint64_t> row_begin{0};
  std::vector<Key> keys;
  std::vector<uint64_t> epoch_begin{0};

  // What is known of the whole data.
  uint64_t data_rows = 0;
  bool data_rows_exact = true;  // false: estimated from the sample's bytes per row
  uint64_t data_bytes = 0;      // size of the file (0 for rows in memory)
  uint64_t bytes_read = 0;      // of the file, to take the sample
  uint64_t bad_lines = 0;       // skipped in the sampled part
  double seconds_reading = 0;

  SparseRows rows() const { return SparseRows{row_begin, keys}; }
  uint64_t epochs() const { return epoch_begin.size() - 1; }
  // Appends rows [begin, end) of `data` as one more epoch.
  void AddEpoch(const SparseRows& data, uint64_t begin, uint64_t end);
};

struct ProfileOptions {
  double sample_fraction = 0.05;
  uint64_t capacity_cells = 0;  // 0: the whole switch layout
  uint64_t min_frequency = 0;   // in sampled updates
  // Also leave out keys pushed fewer times than this per epoch (over all
  // workers, estimated from the sample): a hot cell costs the hot path a
  // fixed amount every epoch, which only keys aggregated often repay.
  double min_pushes_per_epoch = 0;
  uint32_t value_len = 1;      // values per key (embedding dimension; 1 for LR)
  uint32_t batch_size = 1000;  // rows per worker per epoch
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
  bool rows_exact = true;  // false: estimated from the sample (a file read in part)
  uint64_t data_bytes = 0;
  uint64_t sample_bytes_read = 0;
  double seconds_sampling = 0;  // reading the sample
  uint64_t sampled_epochs = 0;
  uint64_t sampled_rows = 0;
  uint64_t sampled_updates = 0;
  uint64_t sampled_distinct_keys = 0;  // tracked by the counter
  uint64_t sampled_occurrences = 0;    // feature occurrences in the sampled rows
  bool counter_exact = true;
  uint64_t counter_error_bound = 0;

  // The choice.
  uint64_t capacity_cells = 0;
  uint64_t hot_keys = 0;
  uint64_t hot_values = 0;
  double seconds_profiling = 0;  // counting, choosing and placing

  // Against the whole data (when evaluated; a pass over all of it).
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

// Throws std::invalid_argument for bad options (all functions below).
void CheckProfileOptions(const ProfileOptions& options);

// Which epochs to sample: round(fraction x epochs) of them (at least one),
// one drawn at random from each of as many equal strata, so the sample spans
// the whole data rather than its head. Increasing.
std::vector<uint64_t> ChooseSampledEpochs(uint64_t epochs, double fraction, uint64_t seed);

// The sampled epochs of rows in memory.
EpochSample SampleEpochs(const SparseRows& data, const ProfileOptions& options);

// Counts the sample, chooses and places the hot set and replays the sampled
// epochs. Keys are ranked by sampled updates; equal update counts are ranked
// by how often the key occurs in the sampled rows (a finer estimate of its
// rate than the number of pushes that carried it), then by key.
ProfileResult ProfileSample(const EpochSample& sample, const ProfileOptions& options);

// Counts every update of `data` (cut into epochs as the profile was) and
// fills the coverage part of `report` for `chosen`; also sets the exact row
// and epoch counts.
void EvaluateCoverage(const SparseRows& data, const ProfileOptions& options, const HotSet& chosen,
                      ProfileReport* report);

// All three steps on rows in memory (evaluating unless options.evaluate is
// false).
ProfileResult ProfileHotParameters(const SparseRows& data, const ProfileOptions& options);

nlohmann::json ToJson(const ProfileReport& report);

}  // namespace libra::hot
