// The worker's sampling phase: before the hot path's first epoch a worker
// counts how often it pushes each key (and the largest magnitude it pushes)
// and times its epochs, and its JOIN hands the controller the heaviest of
// those counts (sampled_counts.h), from which the controller chooses the hot
// set, and the median epoch, the plain path's as measured (cost_model.h).
//
// Not thread-safe: the worker path counts under its push lock, and then
// hands the sampler to its JOIN thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "hot/hot_key_table.h"
#include "hotpath/messages/control_messages.h"
#include "ps/internal/hot_path_hooks.h"

namespace libra::hotpath {

class KeySampler {
 public:
  // Counts one push of the sampling phase.
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
  std::uint64_t keys_counted() const { return keys_counted_; }  // distinct, when taken
  std::uint64_t keys_taken() const { return keys_taken_; }

 private:
  struct Sampled {
    std::uint64_t updates = 0;
    std::uint32_t value_len = 1;
  };
  hot::HotKeyTable<Sampled> counts_;
  float max_abs_ = 0;
  std::uint64_t keys_counted_ = 0, keys_taken_ = 0;
  std::optional<std::chrono::steady_clock::time_point> last_push_;
  std::vector<double> epoch_seconds_;
};

}  // namespace libra::hotpath
