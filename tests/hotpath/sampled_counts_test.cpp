#include "hotpath/worker/sampled_counts.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace libra::hotpath {
namespace {

TEST(SampledCounts, AWorkerSendsItsHeaviestKeysInKeyOrder) {
  std::vector<KeyCount> counts;
  for (uint64_t k = 0; k < 1000; ++k) counts.push_back({999 - k, 1, k % 10, 0});
  const std::vector<KeyCount> sent = HeaviestCounts(counts, 250);
  ASSERT_EQ(sent.size(), 250u);
  // 100 keys each of 9, 8 updates and 50 of the 7s (ties: the lower keys).
  for (size_t i = 1; i < sent.size(); ++i) EXPECT_LT(sent[i - 1].key, sent[i].key);
  size_t sevens = 0;
  for (const KeyCount& c : sent) {
    EXPECT_GE(c.updates, 7u);
    if (c.updates == 7) ++sevens;
  }
  EXPECT_EQ(sevens, 50u);
  uint64_t largest_seven = 0;
  for (const KeyCount& c : sent) {
    if (c.updates == 7) largest_seven = std::max(largest_seven, c.key);
  }
  for (const KeyCount& c : counts) {
    if (c.updates == 7 && c.key < largest_seven) {
      EXPECT_TRUE(
          std::any_of(sent.begin(), sent.end(), [&](const KeyCount& s) { return s.key == c.key; }))
          << "a lower key of the same count was left out: " << c.key;
    }
  }
}

TEST(SampledCounts, FewerKeysThanTheLimitAreAllSentSorted) {
  const std::vector<KeyCount> sent = HeaviestCounts({{5, 1, 1, 0}, {2, 4, 9, 1}, {7, 1, 3, 0}}, 10);
  ASSERT_EQ(sent.size(), 3u);
  EXPECT_EQ(sent[0].key, 2u);
  EXPECT_EQ(sent[0].value_len, 4u);
  EXPECT_EQ(sent[0].server, 1u);
  EXPECT_EQ(sent[1].key, 5u);
  EXPECT_EQ(sent[2].key, 7u);
}

// Against the definition: sort by updates (most first, ties: the lower
// key), keep `limit`, sort by key. Many ties at the cut, keys given in key
// order (as a KeySampler gives them) and shuffled.
TEST(SampledCounts, TheHeaviestAreThoseOfTheDefinitionAtEveryLimit) {
  std::mt19937_64 rng(11);
  std::vector<KeyCount> counts;
  for (uint64_t k = 0; k < 2000; ++k) {
    counts.push_back({k * 7919 + 3, 1 + static_cast<uint32_t>(k % 3), rng() % 6, 0});
  }
  std::vector<KeyCount> reference = counts;
  std::sort(reference.begin(), reference.end(), [](const KeyCount& a, const KeyCount& b) {
    return a.updates != b.updates ? a.updates > b.updates : a.key < b.key;
  });
  for (size_t limit : {size_t{0}, size_t{1}, size_t{333}, size_t{1000}, size_t{1999}}) {
    std::vector<KeyCount> expected(reference.begin(),
                                   reference.begin() + static_cast<std::ptrdiff_t>(limit));
    std::sort(expected.begin(), expected.end(),
              [](const KeyCount& a, const KeyCount& b) { return a.key < b.key; });
    std::vector<KeyCount> shuffled = counts;
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    for (const std::vector<KeyCount>* given : {&counts, &shuffled}) {
      const std::vector<KeyCount> sent = HeaviestCounts(*given, limit);
      ASSERT_EQ(sent.size(), expected.size()) << limit;
      for (size_t i = 0; i < sent.size(); ++i) {
        EXPECT_EQ(sent[i].key, expected[i].key) << limit << " at " << i;
        EXPECT_EQ(sent[i].updates, expected[i].updates);
        EXPECT_EQ(sent[i].value_len, expected[i].value_len);
      }
    }
  }
}

}  // namespace
}  // namespace libra::hotpath
