#include "hotpath/worker/key_sampler.h"

#include <algorithm>
#include <cmath>

#include "hot/median.h"
#include "hotpath/worker/hot_split.h"
#include "hotpath/worker/sampled_counts.h"

namespace libra::hotpath {

void KeySampler::Count(const ps::WorkerHotPath::Parts& push) {
  if (std::is_sorted(push.keys.begin(), push.keys.end())) {
    Merge(push, {});
  } else {
    // Not PS-lite's contract, but counted all the same.
    std::vector<std::size_t> order(push.keys.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&push](std::size_t a, std::size_t b) { return push.keys[a] < push.keys[b]; });
    Merge(push, order);
  }
  counted_pairs_ += push.keys.size();
  counted_values_ += push.vals.size();
  NoteMagnitudes(push);
}

void KeySampler::Merge(const ps::WorkerHotPath::Parts& push, std::span<const std::size_t> order) {
  merged_.clear();
  merged_.reserve(counts_.size() + push.keys.size());
  std::size_t old = 0;
  for (std::size_t j = 0; j < push.keys.size(); ++j) {
    const std::size_t i = order.empty() ? j : order[j];
    const hot::Key key = push.keys[i];
    const auto value_len = static_cast<std::uint32_t>(ValuesOfKey(push, i));
    while (old < counts_.size() && counts_[old].key < key) merged_.push_back(counts_[old++]);
    if (!merged_.empty() && merged_.back().key == key) {  // a key twice in one push
      ++merged_.back().updates;
      merged_.back().value_len = value_len;
      continue;
    }
    Sampled s{key, 0, value_len};
    if (old < counts_.size() && counts_[old].key == key) s.updates = counts_[old++].updates;
    ++s.updates;
    merged_.push_back(s);
  }
  merged_.insert(merged_.end(), counts_.begin() + static_cast<std::ptrdiff_t>(old), counts_.end());
  counts_.swap(merged_);
}

void KeySampler::NoteMagnitudes(const ps::WorkerHotPath::Parts& push) {
  for (float v : push.vals) max_abs_ = std::max(max_abs_, std::fabs(v));
}

std::vector<KeyCount> KeySampler::TakeHeaviest(std::size_t limit) {
  std::vector<KeyCount> counted;
  counted.reserve(counts_.size());
  for (const Sampled& s : counts_) counted.push_back({s.key, s.value_len, s.updates, 0});
  counts_ = {};
  merged_ = {};
  keys_counted_ = counted.size();
  std::vector<KeyCount> heaviest = HeaviestCounts(std::move(counted), limit);
  keys_taken_ = heaviest.size();
  return heaviest;
}

void KeySampler::NotePushAt(std::chrono::steady_clock::time_point at) {
  if (last_push_ && at >= *last_push_) {
    epoch_seconds_.push_back(std::chrono::duration<double>(at - *last_push_).count());
  }
  last_push_ = at;
}

double KeySampler::MedianEpochSeconds() const { return hot::UpperMedian(epoch_seconds_); }

}  // namespace libra::hotpath
