#include "hotpath/worker/key_sampler.h"

#include <algorithm>
#include <cmath>

#include "hot/median.h"
#include "hotpath/worker/hot_split.h"
#include "hotpath/worker/sampled_counts.h"

namespace libra::hotpath {

void KeySampler::Count(const ps::WorkerHotPath::Parts& push) {
  // A push of millions of keys: size the table once instead of rehashing it
  // at every doubling, and fetch slots ahead of their use.
  if (counts_.size() == 0 && push.keys.size() > 4096) {
    counts_ = hot::HotKeyTable<Sampled>(push.keys.size());
  }
  constexpr std::size_t kAhead = 8;
  for (std::size_t i = 0; i < push.keys.size(); ++i) {
    if (i + kAhead < push.keys.size()) counts_.Prefetch(push.keys[i + kAhead]);
    Sampled& s = counts_.FindOrInsert(push.keys[i], Sampled{});
    ++s.updates;
    s.value_len = static_cast<std::uint32_t>(ValuesOfKey(push, i));
  }
  NoteMagnitudes(push);
}

void KeySampler::NoteMagnitudes(const ps::WorkerHotPath::Parts& push) {
  for (float v : push.vals) max_abs_ = std::max(max_abs_, std::fabs(v));
}

std::vector<KeyCount> KeySampler::TakeHeaviest(std::size_t limit) {
  std::vector<KeyCount> counted;
  counted.reserve(counts_.size());
  counts_.ForEach([&](hot::Key key, const Sampled& s) {
    counted.push_back({key, s.value_len, s.updates, 0});
  });
  counts_.Clear();
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
