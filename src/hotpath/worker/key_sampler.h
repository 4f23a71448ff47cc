// The worker's sampling phase: before the hot path's first epoch a worker
// counts how often it pushes each key (and the largest magnitude it pushes)
// and times its epochs, and its JOIN hands the controller the heaviest of
// those counts (sampled_counts.h), from which the controller chooses the hot
// set, and the median epoch, the plain path's as measured (cost_model.h).
//
// The counts are kept in key order, merged with each push's keys (which
// PS-lite pushes in ascending order): counting a push is one pass over the
// counts so far and the push, with no hashing, and the JOIN, which carries
// its counts in key order, needs no sort of its own (a hash table and a sort
// at the JOIN took three times as long: `bench_hotpath
// --benchmark_filter=WorkerSamples`).
//
// Not thread-safe: the worker path counts under its push lock, and then
// hands the sampler to its JOIN thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "hot/hot_set.h"
#include "hotpath/messages/control_messages.h"
#include "ps/internal/hot_path_hooks.h"

namespace libra::hotpath {

class KeySampler {
 public:
  // Counts one push of the sampling phase: each key once per time it is in
  // the push, with the number of values it had in its latest push. Keys in
  // any order are counted; ascending ones (PS-lite's contract) fastest.
  void Count(const ps::WorkerHotPath::Parts& push);

  // Takes the magnitudes of `push` into max_abs() without counting it (the
  // JOIN's own push).
  void NoteMagnitudes(const ps::WorkerHotPath::Parts& push);

  // The `limit` heaviest counts, in ascending key order (HeaviestCounts),
  // their `server` left 0 for the caller to fill; forgets every count.
  std::vector<KeyCount> TakeHeaviest(std::size_t limit);

  // A push of the sampling phase (or the JOIN's) began at `at`: the time
  // from one to the next is an epoch of the plain path.
  void NotePushAt(std::chrono::steady_clock::time_point at);
  // The median of those epochs in seconds; 0 before two pushes.
  double MedianEpochSeconds() const;

  float max_abs() const { return max_abs_; }
  // Key-value pairs and values of every counted push (JoinRequest's
  // counted_pairs and counted_values).
  std::uint64_t counted_pairs() const { return counted_pairs_; }
  std::uint64_t counted_values() const { return counted_values_; }
  std::uint64_t keys_counted() const { return keys_counted_; }  // distinct, when taken
  std::uint64_t keys_taken() const { return keys_taken_; }

 private:
  struct Sampled {
    hot::Key key = 0;
    std::uint32_t updates = 0;
    std::uint32_t value_len = 1;
  };
  // Merges the keys of `push` into counts_, taken in the order `order`
  // gives their places (ascending keys; a key may repeat), or in the push's
  // own order when `order` is empty.
  void Merge(const ps::WorkerHotPath::Parts& push, std::span<const std::size_t> order);
  std::vector<Sampled> counts_;  // ascending by key, each key once
  std::vector<Sampled> merged_;  // the next counts_, kept for its capacity
  float max_abs_ = 0;
  std::uint64_t counted_pairs_ = 0, counted_values_ = 0;
  std::uint64_t keys_counted_ = 0, keys_taken_ = 0;
  std::optional<std::chrono::steady_clock::time_point> last_push_;
  std::vector<double> epoch_seconds_;
};

}  // namespace libra::hotpath
