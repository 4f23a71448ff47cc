#include "hotpath/worker/sampled_counts.h"

#include <algorithm>

namespace libra::hotpath {

std::vector<KeyCount> HeaviestCounts(std::vector<KeyCount> counts, std::size_t limit) {
  if (counts.size() > limit) {
    const auto heavier = [](const KeyCount& a, const KeyCount& b) {
      return a.updates != b.updates ? a.updates > b.updates : a.key < b.key;
    };
    std::nth_element(counts.begin(), counts.begin() + static_cast<std::ptrdiff_t>(limit),
                     counts.end(), heavier);
    counts.resize(limit);
  }
  std::sort(counts.begin(), counts.end(),
            [](const KeyCount& a, const KeyCount& b) { return a.key < b.key; });
  return counts;
}

}  // namespace libra::hotpath
