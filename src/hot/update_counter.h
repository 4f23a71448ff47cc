// Counting how often each parameter key is updated, in bounded memory.
//
// The counter is exact while the distinct keys fit its memory budget. Past
// that it keeps going as a Space-Saving heavy-hitter sketch (Metwally,
// Agrawal, El Abbadi, ICDT 2005) with m counters, seeded with the m largest
// exact counts. With N the total weight added:
//
//   - every reported count c and error e bound the true count f: c - e <= f <= c;
//   - every error is at most floor(N / m), so any key with f > N / m is tracked;
//   - the reported counts never under-estimate, so the top of Counts() holds
//     the true heavy hitters.
//
// The bound holds across the switch because the seeded counts are exact and
// every key dropped at the switch had a count no larger than the smallest one
// kept (docs/hot-parameters.md has the argument).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "hot/hot_key_table.h"

namespace libra::hot {

// An estimated count: the true count lies in [count - error, count].
struct KeyCount {
  Key key = 0;
  uint64_t count = 0;
  uint64_t error = 0;
};

class SpaceSavingSketch;

class UpdateCounter {
 public:
  static constexpr size_t kDefaultMemoryBudget = size_t{256} << 20;

  explicit UpdateCounter(size_t memory_budget_bytes = kDefaultMemoryBudget);
  ~UpdateCounter();
  UpdateCounter(UpdateCounter&&) noexcept;
  UpdateCounter& operator=(UpdateCounter&&) noexcept;

  void Add(Key key, uint64_t weight = 1) {
    if (sketch_ == nullptr) {
      // The common case stays inline: one probe of a flat table.
      const size_t before = exact_.size();
      exact_.FindOrInsert(key, 0) += weight;
      total_ += weight;
      if (exact_.size() > before && exact_.size() > max_exact_keys_) SwitchToSketch();
      return;
    }
    AddToSketch(key, weight);
  }
  void AddAll(std::span<const Key> keys) {
    constexpr size_t kPrefetchDistance = 16;
    for (size_t i = 0; i < keys.size(); ++i) {
      if (sketch_ == nullptr && i + kPrefetchDistance < keys.size()) {
        exact_.Prefetch(keys[i + kPrefetchDistance]);
      }
      Add(keys[i]);
    }
  }

  bool exact() const { return sketch_ == nullptr; }
  uint64_t total() const { return total_; }
  // The largest error of any reported count: 0 while exact, at most N / m after.
  uint64_t error_bound() const;
  size_t max_exact_keys() const { return max_exact_keys_; }
  size_t sketch_counters() const { return sketch_counters_; }
  size_t tracked_keys() const;

  KeyCount Estimate(Key key) const;
  // Every tracked key, largest count first (ties by key, so the order is stable).
  std::vector<KeyCount> Counts() const;

 private:
  void SwitchToSketch();
  void AddToSketch(Key key, uint64_t weight);

  size_t max_exact_keys_;
  size_t sketch_counters_;
  uint64_t total_ = 0;
  HotKeyTable<uint64_t> exact_;
  std::unique_ptr<SpaceSavingSketch> sketch_;
};

}  // namespace libra::hot
