#include "hotpath/controller/sampled_sums.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

namespace libra::hotpath {
namespace {

TEST(SampledSums, EveryWorkersCountsOfAKeyAddUpInKeyOrderWithTheFirstJoinsServer) {
  const std::vector<KeyCount> first = {{3, 1, 5, 0}, {7, 2, 1, 0}, {9, 1, 2, 0}};
  const std::vector<KeyCount> second = {{1, 1, 4, 1}, {7, 2, 6, 1}, {8, 0, 9, 1}};
  const SampledSums sums = SumSampledCounts({&first, &second});
  ASSERT_EQ(sums.keys.size(), 4u) << "key 8 has no values to aggregate";
  EXPECT_EQ(sums.keys[0].key, 1u);
  EXPECT_EQ(sums.keys[1].key, 3u);
  EXPECT_EQ(sums.keys[2].key, 7u);
  EXPECT_EQ(sums.keys[2].frequency, 7u);
  EXPECT_EQ(sums.keys[2].value_len, 2u);
  EXPECT_EQ(sums.servers[2], 0u) << "the first JOIN naming key 7 gave it server 0";
  EXPECT_EQ(sums.servers[0], 1u);
  EXPECT_EQ(sums.keys[3].key, 9u);
}

TEST(SampledSums, AnyNumberOfJoinsInAnyOrderSumAsAMapOfTheirCountsDoes) {
  std::mt19937_64 random(11);
  for (int round = 0; round < 100; ++round) {
    const int joins = 1 + static_cast<int>(random() % 7);
    std::vector<std::vector<KeyCount>> lists(joins);
    std::map<uint64_t, uint64_t> expected;
    std::map<uint64_t, uint32_t> server_of;
    for (int j = 0; j < joins; ++j) {
      const int n = static_cast<int>(random() % 40);
      for (int i = 0; i < n; ++i) {
        const uint64_t key = random() % 50;
        const uint64_t updates = 1 + random() % 9;
        lists[j].push_back({key, 1, updates, static_cast<uint32_t>(j)});
        expected[key] += updates;
        server_of.emplace(key, static_cast<uint32_t>(j));
      }
      // Most JOINs in key order (as workers send them), some not.
      if (random() % 3 != 0) {
        std::sort(lists[j].begin(), lists[j].end(),
                  [](const KeyCount& a, const KeyCount& b) { return a.key < b.key; });
      }
    }
    std::vector<const std::vector<KeyCount>*> pointers;
    for (const auto& list : lists) pointers.push_back(&list);
    const SampledSums sums = SumSampledCounts(pointers);
    ASSERT_EQ(sums.keys.size(), expected.size()) << "round " << round;
    size_t i = 0;
    for (const auto& [key, updates] : expected) {
      EXPECT_EQ(sums.keys[i].key, key) << "round " << round;
      EXPECT_EQ(sums.keys[i].frequency, updates) << "round " << round << ", key " << key;
      EXPECT_EQ(sums.servers[i], server_of[key]) << "round " << round << ", key " << key;
      ++i;
    }
  }
}

TEST(SampledSums, TheRankingIsChooseHotKeysOrderHeaviestFirstTiesToTheLowerKey) {
  std::mt19937_64 random(5);
  std::vector<hot::HotKey> keys;
  for (uint64_t key = 0; key < 500; ++key) {
    if (random() % 2) keys.push_back({key * 3, 1, random() % 20});
    // Some heavier than the counting sort's buckets (4096 updates), with ties.
    if (random() % 5 == 0) keys.push_back({key * 3 + 1, 1, 4000 + random() % 200});
  }
  keys.push_back({100000, 1, uint64_t{1} << 40});  // ranks as 2^32 - 1: still the heaviest
  const std::vector<uint32_t> places = RankHeaviestFirst(keys);
  std::vector<hot::HotKey> expected = keys;
  std::sort(expected.begin(), expected.end(), [](const hot::HotKey& a, const hot::HotKey& b) {
    return a.frequency != b.frequency ? a.frequency > b.frequency : a.key < b.key;
  });
  ASSERT_EQ(places.size(), keys.size());
  for (size_t i = 0; i < places.size(); ++i) {
    EXPECT_EQ(keys[places[i]].key, expected[i].key) << "rank " << i;
  }
}

}  // namespace
}  // namespace libra::hotpath
