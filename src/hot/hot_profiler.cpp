#include "libra/hot_profiler.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "libra/placement.h"

namespace libra::hot {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Cuts the rows into epochs of `workers` pushes of `batch_size` rows and hands
// out the distinct keys of each push.
class PushReader {
 public:
  PushReader(const SparseRows& data, uint32_t batch_size, uint32_t workers)
      : data_(data), batch_size_(batch_size), workers_(workers) {}

  uint64_t epochs() const {
    const uint64_t rows_per_epoch = uint64_t{batch_size_} * workers_;
    return (data_.rows() + rows_per_epoch - 1) / rows_per_epoch;
  }

  // Calls fn(rows in the push, its distinct keys) for each push of `epoch`.
  template <typename Fn>
  void ForEachPush(uint64_t epoch, Fn&& fn) {
    for (uint32_t worker = 0; worker < workers_; ++worker) {
      const uint64_t begin = (epoch * workers_ + worker) * batch_size_;
      if (begin >= data_.rows()) return;
      const uint64_t end = std::min<uint64_t>(begin + batch_size_, data_.rows());
      distinct_.clear();
      seen_.Clear();
      for (uint64_t i = data_.row_begin[begin]; i < data_.row_begin[end]; ++i) {
        const size_t before = seen_.size();
        seen_.FindOrInsert(data_.keys[i]);
        if (seen_.size() != before) distinct_.push_back(data_.keys[i]);
      }
      fn(end - begin, std::span<const Key>(distinct_));
    }
  }

 private:
  const SparseRows& data_;
  uint32_t batch_size_;
  uint32_t workers_;
  HotKeyTable<uint8_t> seen_;
  std::vector<Key> distinct_;
};

// About `fraction` of the epochs, one drawn at random from each of equal
// strata, so the sample spans the whole data rather than its head.
std::vector<uint64_t> SampleEpochs(uint64_t epochs, double fraction, uint64_t seed) {
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

void CheckOptions(const SparseRows& data, const ProfileOptions& options) {
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
  if (data.rows() > 0 && data.row_begin[data.rows()] > data.keys.size()) {
    throw std::invalid_argument("profile: row offsets run past the keys");
  }
}

std::vector<HotKey> ToCandidates(const std::vector<KeyCount>& counts, uint32_t value_len) {
  std::vector<HotKey> candidates;
  candidates.reserve(counts.size());
  for (const KeyCount& count : counts)
    candidates.push_back(HotKey{count.key, value_len, count.count});
  return candidates;
}

struct WholeDataCounts {
  HotKeyTable<uint64_t> updates;  // per key, in pushes
  uint64_t total = 0;
};

WholeDataCounts CountWholeData(PushReader& reader) {
  WholeDataCounts counts;
  for (uint64_t epoch = 0; epoch < reader.epochs(); ++epoch) {
    reader.ForEachPush(epoch, [&](uint64_t, std::span<const Key> keys) {
      for (Key key : keys) ++counts.updates.FindOrInsert(key);
      counts.total += keys.size();
    });
  }
  return counts;
}

double Coverage(const std::vector<HotKey>& chosen, const WholeDataCounts& counts) {
  uint64_t covered = 0;
  for (const HotKey& key : chosen) {
    const uint64_t* updates = counts.updates.Find(key.key);
    if (updates != nullptr) covered += *updates;
  }
  return counts.total == 0 ? 0.0 : double(covered) / double(counts.total);
}

void Replay(PushReader& reader, const std::vector<uint64_t>& epochs, const HotSet& heat,
            const HotSet& hash, ProfileReport& report) {
  const uint32_t arrays = heat.layout().num_arrays;
  LayoutAwarePacker packer(arrays);
  std::vector<SlotValue> packet(arrays);
  std::vector<Key> hot_keys;
  std::vector<CellAddress> naive_cells;
  PackingStats naive;
  for (uint64_t epoch : epochs) {
    reader.ForEachPush(epoch, [&](uint64_t, std::span<const Key> keys) {
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
        for (CellAddress cell : hash.CellsOf(hash.Find(key))) naive_cells.push_back(cell);
      }
      naive += CountSequentialPackets(naive_cells, arrays);
    });
  }
  report.heat_layout_aware = ReplayMetrics{packer.stats(), epochs.size()};
  report.hash_naive = ReplayMetrics{naive, epochs.size()};
  report.conflict_reduction =
      naive.conflicts == 0 ? 0.0 : 1.0 - double(packer.stats().conflicts) / double(naive.conflicts);
}

}  // namespace

ProfileResult ProfileHotParameters(const SparseRows& data, const ProfileOptions& options) {
  CheckOptions(data, options);
  const auto start = Clock::now();
  ProfileReport report;
  PushReader reader(data, options.batch_size, options.workers);
  report.rows = data.rows();
  report.epochs = reader.epochs();
  report.capacity_cells =
      options.capacity_cells != 0 ? options.capacity_cells : options.layout.capacity();

  const std::vector<uint64_t> sampled =
      SampleEpochs(report.epochs, options.sample_fraction, options.seed);
  UpdateCounter counter(options.counter_memory_budget);
  for (uint64_t epoch : sampled) {
    reader.ForEachPush(epoch, [&](uint64_t rows, std::span<const Key> keys) {
      report.sampled_rows += rows;
      counter.AddAll(keys);
    });
  }
  report.sampled_epochs = sampled.size();
  report.sampled_updates = counter.total();
  report.sampled_distinct_keys = counter.tracked_keys();
  report.counter_exact = counter.exact();
  report.counter_error_bound = counter.error_bound();

  std::vector<HotKey> chosen = ChooseHotKeys(ToCandidates(counter.Counts(), options.value_len),
                                             report.capacity_cells, options.min_frequency);
  HotSet hash_set = PlaceHotSet(chosen, options.layout, HashPlacement());
  HotSet heat_set = PlaceHotSet(chosen, options.layout, HeatPlacement());
  report.hot_keys = heat_set.size();
  report.hot_values = heat_set.num_values();
  report.seconds_profiling = SecondsSince(start);

  if (options.evaluate) {
    const auto evaluation_start = Clock::now();
    const WholeDataCounts whole = CountWholeData(reader);
    std::vector<KeyCount> exact;
    exact.reserve(whole.updates.size());
    whole.updates.ForEach([&](Key key, uint64_t updates) { exact.push_back({key, updates, 0}); });
    const std::vector<HotKey> optimal =
        ChooseHotKeys(ToCandidates(exact, options.value_len), report.capacity_cells);
    report.evaluated = true;
    report.total_updates = whole.total * options.value_len;
    report.distinct_keys = whole.updates.size();
    report.optimal_hot_keys = optimal.size();
    // Every key has the same value length here, so value-update shares equal
    // update shares.
    report.sampled_coverage = Coverage(chosen, whole);
    report.optimal_coverage = Coverage(optimal, whole);
    report.coverage_ratio =
        report.optimal_coverage == 0 ? 0.0 : report.sampled_coverage / report.optimal_coverage;
    uint64_t recalled = 0;
    for (const HotKey& key : optimal) recalled += heat_set.IsHot(key.key) ? 1 : 0;
    report.recall = optimal.empty() ? 1.0 : double(recalled) / double(optimal.size());
    report.seconds_evaluating = SecondsSince(evaluation_start);
  }

  Replay(reader, sampled, heat_set, hash_set, report);
  return ProfileResult{std::move(heat_set), report};
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
      {"data", {{"rows", report.rows}, {"epochs", report.epochs}}},
      {"sample",
       {{"epochs", report.sampled_epochs},
        {"rows", report.sampled_rows},
        {"updates", report.sampled_updates},
        {"distinct_keys", report.sampled_distinct_keys},
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
