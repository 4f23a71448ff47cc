#include "hot/hot_profiler.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "hot/placement.h"

namespace libra::hot {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

uint64_t EpochsOf(uint64_t rows, const ProfileOptions& options) {
  const uint64_t rows_per_epoch = uint64_t{options.batch_size} * options.workers;
  return (rows + rows_per_epoch - 1) / rows_per_epoch;
}

// Hands out the pushes of a run of rows: consecutive `batch_size` rows each,
// as the keys it carries (each distinct key once) with the number of rows of
// the push it occurs in.
class PushReader {
 public:
  PushReader(const SparseRows& data, uint32_t batch_size) : data_(data), batch_size_(batch_size) {}

  // Calls fn(rows in the push, distinct keys, occurrences of each) for every
  // push of the rows [begin, end).
  template <typename Fn>
  void ForEachPush(uint64_t begin, uint64_t end, Fn&& fn) {
    for (uint64_t first = begin; first < end; first += batch_size_) {
      const uint64_t last = std::min<uint64_t>(first + batch_size_, end);
      distinct_.clear();
      occurrences_.clear();
      seen_.Clear();
      for (uint64_t i = data_.row_begin[first]; i < data_.row_begin[last]; ++i) {
        uint32_t& slot = seen_.FindOrInsert(data_.keys[i], kNew);
        if (slot == kNew) {
          slot = static_cast<uint32_t>(distinct_.size());
          distinct_.push_back(data_.keys[i]);
          occurrences_.push_back(0);
        }
        ++occurrences_[slot];
      }
      fn(last - first, std::span<const Key>(distinct_), std::span<const uint64_t>(occurrences_));
    }
  }

 private:
  static constexpr uint32_t kNew = ~uint32_t{0};

  const SparseRows& data_;
  uint32_t batch_size_;
  HotKeyTable<uint32_t> seen_;  // key -> its index in distinct_
  std::vector<Key> distinct_;
  std::vector<uint64_t> occurrences_;
};

void CheckRows(const SparseRows& data) {
  if (data.rows() > 0 && data.row_begin[data.rows()] > data.keys.size()) {
    throw std::invalid_argument("profile: row offsets run past the keys");
  }
}

struct RankedCandidate {
  HotKey key;
  uint64_t occurrences = 0;
};

// Sampled update counts, the finer occurrence counts to break their ties.
std::vector<HotKey> RankCandidates(const UpdateCounter& updates, const UpdateCounter& occurrences,
                                   uint32_t value_len) {
  std::vector<RankedCandidate> ranked;
  const std::vector<KeyCount> counts = updates.Counts();
  ranked.reserve(counts.size());
  for (const KeyCount& count : counts) {
    ranked.push_back(
        {HotKey{count.key, value_len, count.count}, occurrences.Estimate(count.key).count});
  }
  std::sort(ranked.begin(), ranked.end(), [](const RankedCandidate& a, const RankedCandidate& b) {
    if (a.key.frequency != b.key.frequency) return a.key.frequency > b.key.frequency;
    if (a.occurrences != b.occurrences) return a.occurrences > b.occurrences;
    return a.key.key < b.key.key;
  });
  std::vector<HotKey> keys;
  keys.reserve(ranked.size());
  for (const RankedCandidate& candidate : ranked) keys.push_back(candidate.key);
  return keys;
}

void Replay(const EpochSample& sample, uint32_t batch_size, const HotSet& heat, const HotSet& hash,
            ProfileReport& report) {
  const SparseRows rows = sample.rows();
  PushReader reader(rows, batch_size);
  const uint32_t arrays = heat.layout().num_arrays;
  LayoutAwarePacker packer(arrays);
  std::vector<SlotValue> packet(arrays);
  std::vector<Key> hot_keys;
  std::vector<CellAddress> naive_cells;
  PackingStats naive;
  for (uint64_t epoch = 0; epoch < sample.epochs(); ++epoch) {
    reader.ForEachPush(sample.epoch_begin[epoch], sample.epoch_begin[epoch + 1],
                       [&](uint64_t, std::span<const Key> keys, std::span<const uint64_t>) {
                         hot_keys.clear();
                         for (Key key : keys) {
                           const uint32_t index = heat.Find(key);
                           if (index == HotSet::kCold) continue;
                           hot_keys.push_back(key);
                           for (CellAddress cell : heat.CellsOf(index)) packer.Push(cell, 1.0f);
                         }
                         while (packer.NextPacket(packet)) {
                         }
                         // The baseline sends the push's hot keys in key order, as PS-lite does.
                         std::sort(hot_keys.begin(), hot_keys.end());
                         naive_cells.clear();
                         for (Key key : hot_keys) {
                           for (CellAddress cell : hash.CellsOf(hash.Find(key)))
                             naive_cells.push_back(cell);
                         }
                         naive += CountSequentialPackets(naive_cells, arrays);
                       });
  }
  report.heat_layout_aware = ReplayMetrics{packer.stats(), sample.epochs()};
  report.hash_naive = ReplayMetrics{naive, sample.epochs()};
  report.conflict_reduction =
      naive.conflicts == 0 ? 0.0 : 1.0 - double(packer.stats().conflicts) / double(naive.conflicts);
}

}  // namespace

void EpochSample::AddEpoch(const SparseRows& data, uint64_t begin, uint64_t end) {
  const uint64_t first_key = data.row_begin[begin];
  const uint64_t base = keys.size();
  keys.insert(keys.end(), data.keys.begin() + static_cast<ptrdiff_t>(first_key),
              data.keys.begin() + static_cast<ptrdiff_t>(data.row_begin[end]));
  for (uint64_t r = begin + 1; r <= end; ++r) {
    row_begin.push_back(base + (data.row_begin[r] - first_key));
  }
  epoch_begin.push_back(row_begin.size() - 1);
}

void CheckProfileOptions(const ProfileOptions& options) {
  if (!(options.sample_fraction > 0.0 && options.sample_fraction <= 1.0)) {
    throw std::invalid_argument("profile: sample fraction must be in (0, 1]");
  }
  if (options.batch_size == 0) throw std::invalid_argument("profile: batch size must be positive");
  if (options.workers == 0) throw std::invalid_argument("profile: workers must be positive");
  if (options.value_len == 0) throw std::invalid_argument("profile: value length must be positive");
  options.layout.Validate();
  if (options.capacity_cells > options.layout.capacity()) {
    throw std::invalid_argument("profile: capacity of " + std::to_string(options.capacity_cells) +
                                " cells exceeds the switch's " +
                                std::to_string(options.layout.capacity()));
  }
}

std::vector<uint64_t> ChooseSampledEpochs(uint64_t epochs, double fraction, uint64_t seed) {
  if (epochs == 0) return {};
  const auto wanted = static_cast<uint64_t>(std::llround(fraction * static_cast<double>(epochs)));
  const uint64_t count = std::clamp<uint64_t>(wanted, 1, epochs);
  std::mt19937_64 random(seed);
  std::vector<uint64_t> sampled;
  sampled.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t low = i * epochs / count;
    const uint64_t high = (i + 1) * epochs / count;  // > low because count <= epochs
    sampled.push_back(low + random() % (high - low));
  }
  return sampled;
}

EpochSample SampleEpochs(const SparseRows& data, const ProfileOptions& options) {
  CheckProfileOptions(options);
  CheckRows(data);
  EpochSample sample;
  sample.data_rows = data.rows();
  const uint64_t rows_per_epoch = uint64_t{options.batch_size} * options.workers;
  for (uint64_t epoch :
       ChooseSampledEpochs(EpochsOf(data.rows(), options), options.sample_fraction, options.seed)) {
    const uint64_t begin = epoch * rows_per_epoch;
    sample.AddEpoch(data, begin, std::min(begin + rows_per_epoch, data.rows()));
  }
  return sample;
}

ProfileResult ProfileSample(const EpochSample& sample, const ProfileOptions& options) {
  CheckProfileOptions(options);
  const SparseRows rows = sample.rows();
  CheckRows(rows);
  const auto start = Clock::now();
  ProfileReport report;
  report.rows = sample.data_rows;
  report.rows_exact = sample.data_rows_exact;
  report.epochs = EpochsOf(sample.data_rows, options);
  report.data_bytes = sample.data_bytes;
  report.sample_bytes_read = sample.bytes_read;
  report.seconds_sampling = sample.seconds_reading;
  report.capacity_cells =
      options.capacity_cells != 0 ? options.capacity_cells : options.layout.capacity();

  // The occurrence counts only break ties, so they get half the memory.
  UpdateCounter updates(options.counter_memory_budget / 2);
  UpdateCounter occurrences(options.counter_memory_budget / 2);
  PushReader reader(rows, options.batch_size);
  for (uint64_t epoch = 0; epoch < sample.epochs(); ++epoch) {
    reader.ForEachPush(
        sample.epoch_begin[epoch], sample.epoch_begin[epoch + 1],
        [&](uint64_t push_rows, std::span<const Key> keys, std::span<const uint64_t> occurring) {
          report.sampled_rows += push_rows;
          updates.AddAll(keys);
          for (size_t i = 0; i < keys.size(); ++i) {
            occurrences.Add(keys[i], occurring[i]);
          }
        });
  }
  report.sampled_epochs = sample.epochs();
  report.sampled_updates = updates.total();
  report.sampled_occurrences = occurrences.total();
  report.sampled_distinct_keys = updates.tracked_keys();
  report.counter_exact = updates.exact();
  report.counter_error_bound = updates.error_bound();

  const std::vector<HotKey> ranked = RankCandidates(updates, occurrences, options.value_len);
  const auto min_frequency = std::max<uint64_t>(
      options.min_frequency,
      static_cast<uint64_t>(std::ceil(options.min_pushes_per_epoch * sample.epochs())));
  std::vector<HotKey> chosen = ChooseRankedHotKeys(ranked, report.capacity_cells, min_frequency);
  HotSet hash_set = PlaceHotSet(chosen, options.layout, HashPlacement());
  HotSet heat_set = PlaceHotSet(std::move(chosen), options.layout, HeatPlacement());
  report.hot_keys = heat_set.size();
  report.hot_values = heat_set.num_values();
  report.seconds_profiling = SecondsSince(start);

  Replay(sample, options.batch_size, heat_set, hash_set, report);
  return ProfileResult{std::move(heat_set), report};
}

void EvaluateCoverage(const SparseRows& data, const ProfileOptions& options, const HotSet& chosen,
                      ProfileReport* report) {
  CheckProfileOptions(options);
  CheckRows(data);
  const auto start = Clock::now();
  HotKeyTable<uint64_t> updates;  // per key, in pushes
  uint64_t total = 0;
  PushReader reader(data, options.batch_size);
  reader.ForEachPush(0, data.rows(),
                     [&](uint64_t, std::span<const Key> keys, std::span<const uint64_t>) {
                       for (Key key : keys) ++updates.FindOrInsert(key);
                       total += keys.size();
                     });

  std::vector<HotKey> exact;
  exact.reserve(updates.size());
  updates.ForEach([&](Key key, uint64_t count) {
    exact.push_back({key, options.value_len, count});
  });
  const std::vector<HotKey> optimal = ChooseHotKeys(std::move(exact), report->capacity_cells);

  // Coverage in value updates: each key weighs its updates times its values.
  const auto covered = [&](std::span<const HotKey> keys) {
    uint64_t sum = 0;
    for (const HotKey& key : keys) {
      const uint64_t* count = updates.Find(key.key);
      if (count != nullptr) sum += *count * key.value_len;
    }
    return sum;
  };
  const uint64_t total_values = total * options.value_len;
  const uint64_t sampled = covered(chosen.keys());
  const uint64_t best = covered(optimal);

  report->rows = data.rows();
  report->rows_exact = true;
  report->epochs = EpochsOf(data.rows(), options);
  report->evaluated = true;
  report->total_updates = total_values;
  report->distinct_keys = updates.size();
  report->optimal_hot_keys = optimal.size();
  report->sampled_coverage = total_values == 0 ? 0.0 : double(sampled) / double(total_values);
  report->optimal_coverage = total_values == 0 ? 0.0 : double(best) / double(total_values);
  report->coverage_ratio = best == 0 ? 0.0 : double(sampled) / double(best);
  uint64_t recalled = 0;
  for (const HotKey& key : optimal) recalled += chosen.IsHot(key.key) ? 1 : 0;
  report->recall = optimal.empty() ? 1.0 : double(recalled) / double(optimal.size());
  report->seconds_evaluating = SecondsSince(start);
}

ProfileResult ProfileHotParameters(const SparseRows& data, const ProfileOptions& options) {
  const EpochSample sample = SampleEpochs(data, options);
  ProfileResult result = ProfileSample(sample, options);
  if (options.evaluate) EvaluateCoverage(data, options, result.hot_set, &result.report);
  return result;
}

nlohmann::json ToJson(const ProfileReport& report) {
  const auto replay = [](const ReplayMetrics& metrics) {
    return nlohmann::json{{"epochs", metrics.epochs},
                          {"packets", metrics.total.packets},
                          {"values", metrics.total.values},
                          {"packets_per_epoch", metrics.packets_per_epoch()},
                          {"slot_utilisation", metrics.total.utilisation()},
                          {"conflicts", metrics.total.conflicts},
                          {"conflicts_per_epoch", metrics.conflicts_per_epoch()},
                          {"extra_passes", metrics.total.extra_passes}};
  };
  nlohmann::json json{
      {"data",
       {{"rows", report.rows},
        {"rows_exact", report.rows_exact},
        {"epochs", report.epochs},
        {"bytes", report.data_bytes}}},
      {"sample",
       {{"epochs", report.sampled_epochs},
        {"rows", report.sampled_rows},
        {"updates", report.sampled_updates},
        {"occurrences", report.sampled_occurrences},
        {"distinct_keys", report.sampled_distinct_keys},
        {"bytes_read", report.sample_bytes_read},
        {"seconds_reading", report.seconds_sampling},
        {"counter_exact", report.counter_exact},
        {"counter_error_bound", report.counter_error_bound}}},
      {"hot_set",
       {{"capacity_cells", report.capacity_cells},
        {"keys", report.hot_keys},
        {"values", report.hot_values},
        {"seconds", report.seconds_profiling}}},
      {"replay",
       {{"heat_layout_aware", replay(report.heat_layout_aware)},
        {"hash_naive", replay(report.hash_naive)},
        {"conflict_reduction", report.conflict_reduction}}},
  };
  if (report.evaluated) {
    json["coverage"] = {{"total_value_updates", report.total_updates},
                        {"distinct_keys", report.distinct_keys},
                        {"optimal_keys", report.optimal_hot_keys},
                        {"sampled", report.sampled_coverage},
                        {"optimal", report.optimal_coverage},
                        {"ratio", report.coverage_ratio},
                        {"recall", report.recall},
                        {"seconds", report.seconds_evaluating}};
  }
  return json;
}

}  // namespace libra::hot
