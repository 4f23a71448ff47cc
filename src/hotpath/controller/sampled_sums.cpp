#include "hotpath/controller/sampled_sums.h"

#include <algorithm>

namespace libra::hotpath {

void AddSampledCounts(const std::vector<KeyCount>& counts, SampledSums* sums) {
  if (counts.empty()) return;  // a server's JOIN
  SampledSums merged;
  merged.keys.reserve(sums->keys.size() + counts.size());
  merged.servers.reserve(sums->keys.size() + counts.size());
  // Appends a count; a key already last (a key that both lists, or one
  // list twice, name) adds its updates to it and keeps its first server.
  const auto append = [&merged](const hot::HotKey& key, uint32_t server) {
    if (!merged.keys.empty() && merged.keys.back().key == key.key) {
      merged.keys.back().frequency += key.frequency;
      return;
    }
    merged.keys.push_back(key);
    merged.servers.push_back(server);
  };
  size_t old = 0;
  for (const KeyCount& c : counts) {
    if (c.value_len == 0) continue;  // nothing to aggregate
    // The sums so far come first on equal keys: theirs is the first JOIN.
    while (old < sums->keys.size() && sums->keys[old].key <= c.key) {
      append(sums->keys[old], sums->servers[old]);
      ++old;
    }
    append({c.key, c.value_len, c.updates}, c.server);
  }
  for (; old < sums->keys.size(); ++old) append(sums->keys[old], sums->servers[old]);
  *sums = std::move(merged);
}

SampledSums SumSampledCounts(const std::vector<const std::vector<KeyCount>*>& joins) {
  const auto by_key = [](const KeyCount& a, const KeyCount& b) { return a.key < b.key; };
  SampledSums sums;
  for (const std::vector<KeyCount>* counts : joins) {
    if (std::is_sorted(counts->begin(), counts->end(), by_key)) {
      AddSampledCounts(*counts, &sums);
      continue;
    }
    std::vector<KeyCount> sorted = *counts;
    std::stable_sort(sorted.begin(), sorted.end(), by_key);
    AddSampledCounts(sorted, &sums);
  }
  return sums;
}

std::vector<uint32_t> RankHeaviestFirst(const std::vector<hot::HotKey>& keys) {
  // Most sampled keys were pushed a few times: those with fewer than
  // kBuckets updates are ranked by a counting sort, stable so that ties stay
  // in key order; the few heavier ones by sorting one word per key, the
  // complement of its updates above its place (a full sort of the words
  // took half of the controller's pricing of the candidate sets).
  constexpr uint64_t kBuckets = 4096;
  std::vector<uint64_t> heavy;
  std::vector<size_t> next_of(kBuckets, 0);  // per update count: keys, then where the next goes
  for (size_t i = 0; i < keys.size(); ++i) {
    const uint64_t updates = std::min<uint64_t>(keys[i].frequency, UINT32_MAX);
    if (updates < kBuckets) {
      ++next_of[updates];
    } else {
      heavy.push_back((static_cast<uint64_t>(UINT32_MAX - updates) << 32) | i);
    }
  }
  std::sort(heavy.begin(), heavy.end());
  std::vector<uint32_t> places(keys.size());
  for (size_t i = 0; i < heavy.size(); ++i)
    places[i] = static_cast<uint32_t>(heavy[i] & UINT32_MAX);
  size_t at = heavy.size();
  for (uint64_t updates = kBuckets; updates-- > 0;) {
    const size_t count = next_of[updates];
    next_of[updates] = at;
    at += count;
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    const uint64_t updates = keys[i].frequency;
    if (updates < kBuckets) places[next_of[updates]++] = static_cast<uint32_t>(i);
  }
  return places;
}

}  // namespace libra::hotpath
