// The controller's gathering of the JOINs' counts: summed as they come, or
// kept unread until the choice needs them (join_counts.h).
#include "hotpath/controller/join_counts.h"

#include <gtest/gtest.h>

#include <random>
#include <stdexcept>

namespace libra::hotpath {
namespace {

// A worker's JOIN of `keys` random keys in [0, 400), ascending, the same
// server and length for a key in every JOIN (as the workers' slicer and
// model give them).
std::string WorkerJoin(std::mt19937_64& random, uint32_t rank) {
  JoinRequest join;
  join.rank = rank;
  join.counted_pairs = 1;
  for (uint64_t key = random() % 5; key < 400; key += 1 + random() % 5) {
    join.counts.push_back({key, 1 + static_cast<uint32_t>(key % 3), 1 + random() % 9,
                           static_cast<uint32_t>(key % 2)});
  }
  return Encode(join);
}

void ExpectSameSums(const SampledSums& got, const SampledSums& expected) {
  ASSERT_EQ(got.keys.size(), expected.keys.size());
  for (size_t i = 0; i < got.keys.size(); ++i) {
    EXPECT_EQ(got.keys[i].key, expected.keys[i].key) << i;
    EXPECT_EQ(got.keys[i].frequency, expected.keys[i].frequency) << i;
    EXPECT_EQ(got.keys[i].value_len, expected.keys[i].value_len) << i;
    EXPECT_EQ(got.servers[i], expected.servers[i]) << i;
  }
}

// Whichever JOINs' counts wait, once the kept ones are summed the sums are
// those of summing every JOIN as it came.
TEST(JoinCounts, CountsKeptForLaterSumAsIfSummedWhenTheyCame) {
  std::mt19937_64 random(5);
  for (int round = 0; round < 20; ++round) {
    std::vector<std::string> joins;
    for (uint32_t w = 0; w < 4; ++w) joins.push_back(WorkerJoin(random, w));
    JoinCounts at_once;
    JoinCounts mixed;
    for (size_t w = 0; w < joins.size(); ++w) {
      ASSERT_TRUE(at_once.Add(joins[w], static_cast<int>(w), false));
      const bool later = (random() & 1) != 0;
      ASSERT_TRUE(mixed.Add(joins[w], static_cast<int>(w), later));
    }
    mixed.SumKept();
    ExpectSameSums(mixed.sums(), at_once.sums());
    mixed.SumKept();  // nothing kept any more: the sums stay
    ExpectSameSums(mixed.sums(), at_once.sums());
  }
}

// Counts that are never needed are never read; malformed ones are refused
// when they are read: at once (the JOIN is dropped), or when the kept ones
// are summed (the error names the node, and the job stays plain).
TEST(JoinCounts, MalformedCountsAreRefusedWhenTheyAreRead) {
  std::mt19937_64 random(9);
  const std::string good = WorkerJoin(random, 0);
  const std::string cut = good.substr(0, good.size() - 1);
  ASSERT_TRUE(DecodeJoinHeader(cut));

  JoinCounts now;
  EXPECT_FALSE(now.Add(cut, 7, false));
  EXPECT_TRUE(now.sums().keys.empty()) << "nothing of a malformed JOIN is summed";

  JoinCounts kept;
  EXPECT_TRUE(kept.Add(cut, 7, true));
  EXPECT_TRUE(kept.Add(good, 8, false));
  const size_t summed = kept.sums().keys.size();
  EXPECT_GT(summed, 0u);
  try {
    kept.SumKept();
    FAIL() << "malformed kept counts were summed";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("node 7"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace libra::hotpath
