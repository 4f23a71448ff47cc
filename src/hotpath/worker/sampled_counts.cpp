#include "hotpath/worker/sampled_counts.h"

#include <algorithm>
#include <functional>

namespace libra::hotpath {

std::vector<KeyCount> HeaviestCounts(std::vector<KeyCount> counts, std::size_t limit) {
  const auto by_key = [](const KeyCount& a, const KeyCount& b) { return a.key < b.key; };
  // A KeySampler's counts come in key order already.
  if (!std::is_sorted(counts.begin(), counts.end(), by_key)) {
    std::sort(counts.begin(), counts.end(), by_key);
  }
  if (counts.size() <= limit) return counts;
  if (limit == 0) return {};
  // The limit-th most updates: every key above it is taken, and of the keys
  // at it the lowest, in one pass that keeps the key order.
  std::vector<uint64_t> updates;
  updates.reserve(counts.size());
  for (const KeyCount& c : counts) updates.push_back(c.updates);
  const auto nth = updates.begin() + static_cast<std::ptrdiff_t>(limit - 1);
  std::nth_element(updates.begin(), nth, updates.end(), std::greater<uint64_t>());
  const uint64_t threshold = *nth;
  std::size_t room_at_threshold = limit;
  for (const KeyCount& c : counts) room_at_threshold -= c.updates > threshold ? 1 : 0;
  std::vector<KeyCount> heaviest;
  heaviest.reserve(limit);
  for (const KeyCount& c : counts) {
    if (c.updates > threshold) {
      heaviest.push_back(c);
    } else if (c.updates == threshold && room_at_threshold > 0) {
      heaviest.push_back(c);
      --room_at_threshold;
    }
  }
  return heaviest;
}

}  // namespace libra::hotpath
