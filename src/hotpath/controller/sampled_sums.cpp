#include "hotpath/controller/sampled_sums.h"

#include <algorithm>

namespace libra::hotpath {

SampledSums SumSampledCounts(const std::vector<const std::vector<KeyCount>*>& joins) {
  const auto by_key = [](const KeyCount& a, const KeyCount& b) { return a.key < b.key; };
  std::vector<KeyCount> all;
  std::vector<size_t> ends;  // of each JOIN's run in `all`
  for (const std::vector<KeyCount>* counts : joins) {
    const size_t begin = all.size();
    for (const KeyCount& c : *counts) {
      if (c.value_len > 0) all.push_back(c);
    }
    if (!std::is_sorted(all.begin() + begin, all.end(), by_key)) {
      std::stable_sort(all.begin() + begin, all.end(), by_key);
    }
    if (all.size() > begin) ends.push_back(all.size());
  }
  // Merge neighbouring runs until one is left; stable, so a key's counts
  // stay in JOIN order and the first JOIN's server comes first.
  while (ends.size() > 1) {
    std::vector<size_t> merged;
    for (size_t i = 0; i < ends.size(); i += 2) {
      if (i + 1 == ends.size()) {
        merged.push_back(ends[i]);
        break;
      }
      const size_t begin = i == 0 ? 0 : ends[i - 1];
      std::inplace_merge(all.begin() + begin, all.begin() + ends[i], all.begin() + ends[i + 1],
                         by_key);
      merged.push_back(ends[i + 1]);
    }
    ends = std::move(merged);
  }
  SampledSums sums;
  for (const KeyCount& c : all) {
    if (!sums.keys.empty() && sums.keys.back().key == c.key) {
      sums.keys.back().frequency += c.updates;
      continue;
    }
    sums.keys.push_back({c.key, c.value_len, c.updates});
    sums.servers.push_back(c.server);
  }
  return sums;
}

std::vector<uint32_t> RankHeaviestFirst(const std::vector<hot::HotKey>& keys) {
  // One word per key: the complement of its updates above its place, which
  // orders as the keys do since they are ascending.
  std::vector<uint64_t> words(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    const uint64_t updates = std::min<uint64_t>(keys[i].frequency, UINT32_MAX);
    words[i] = (static_cast<uint64_t>(UINT32_MAX - updates) << 32) | i;
  }
  std::sort(words.begin(), words.end());
  std::vector<uint32_t> places(words.size());
  for (size_t i = 0; i < words.size(); ++i)
    places[i] = static_cast<uint32_t>(words[i] & UINT32_MAX);
  return places;
}

}  // namespace libra::hotpath
