#include "hot/update_counter.h"

#include <gtest/gtest.h>

#include <unordered_map>

#include "hot/space_saving_sketch.h"
#include "zipf_data.h"

namespace libra::hot {
namespace {

std::unordered_map<Key, uint64_t> ExactCounts(const std::vector<Key>& stream) {
  std::unordered_map<Key, uint64_t> counts;
  for (Key key : stream) ++counts[key];
  return counts;
}

std::vector<Key> ZipfStream(size_t length, uint64_t vocabulary, double exponent, uint64_t seed) {
  testing::ZipfKeys zipf(vocabulary, exponent, seed);
  std::vector<Key> stream(length);
  for (Key& key : stream) key = zipf.Next() * 1000003;
  return stream;
}

TEST(UpdateCounter, IsExactWhileTheKeysFitTheBudget) {
  const std::vector<Key> stream = ZipfStream(100000, 5000, 1.0, 1);
  UpdateCounter counter(1 << 20);  // room for 32768 keys
  counter.AddAll(stream);
  ASSERT_TRUE(counter.exact());
  EXPECT_EQ(counter.total(), stream.size());
  EXPECT_EQ(counter.error_bound(), 0u);
  const auto truth = ExactCounts(stream);
  EXPECT_EQ(counter.tracked_keys(), truth.size());
  for (const auto& [key, count] : truth) {
    const KeyCount estimate = counter.Estimate(key);
    EXPECT_EQ(estimate.count, count);
    EXPECT_EQ(estimate.error, 0u);
  }
  EXPECT_EQ(counter.Estimate(12345).count, 0u);  // never added
  const std::vector<KeyCount> counts = counter.Counts();
  for (size_t i = 1; i < counts.size(); ++i) EXPECT_GE(counts[i - 1].count, counts[i].count);
}

TEST(UpdateCounter, WeightedAddsSum) {
  UpdateCounter counter;
  counter.Add(7, 3);
  counter.Add(7);
  counter.Add(9, 10);
  EXPECT_EQ(counter.Estimate(7).count, 4u);
  EXPECT_EQ(counter.Estimate(9).count, 10u);
  EXPECT_EQ(counter.total(), 14u);
  EXPECT_THROW(UpdateCounter(16), std::invalid_argument);  // not even one counter
}

// The documented guarantee, checked key by key after the counter has
// outgrown its budget: c - e <= f <= c, e <= N/m, and every key with
// f > N/m tracked.
TEST(UpdateCounter, SketchKeepsItsErrorBoundPastTheBudget) {
  const std::vector<Key> stream = ZipfStream(400000, 200000, 1.05, 2);
  UpdateCounter counter(64 * 1024);  // a few hundred counters only
  counter.AddAll(stream);
  ASSERT_FALSE(counter.exact());
  const uint64_t n = counter.total();
  const uint64_t m = counter.sketch_counters();
  ASSERT_GT(m, 100u);
  ASSERT_EQ(counter.tracked_keys(), m);
  EXPECT_LE(counter.error_bound(), n / m);

  const auto truth = ExactCounts(stream);
  std::unordered_map<Key, KeyCount> tracked;
  for (const KeyCount& estimate : counter.Counts()) {
    tracked[estimate.key] = estimate;
    const uint64_t f = truth.count(estimate.key) ? truth.at(estimate.key) : 0;
    EXPECT_LE(estimate.count - estimate.error, f) << estimate.key;
    EXPECT_GE(estimate.count, f) << estimate.key;
    EXPECT_LE(estimate.error, n / m);
  }
  for (const auto& [key, f] : truth) {
    if (f > n / m) {
      EXPECT_TRUE(tracked.count(key)) << "heavy key " << key << " lost";
    }
    const KeyCount estimate = counter.Estimate(key);
    EXPECT_GE(estimate.count, f);
    EXPECT_LE(estimate.count - estimate.error, f);
  }
}

TEST(SpaceSavingSketch, WeightedAddsKeepBucketsOrderedAndEvictTheSmallest) {
  SpaceSavingSketch sketch(3);
  sketch.Add(1, 5);
  sketch.Add(2, 1);
  sketch.Add(3, 3);
  EXPECT_EQ(sketch.min_count(), 1u);
  sketch.Add(2, 4);  // 2 now ties with 1 at 5
  EXPECT_EQ(sketch.min_count(), 3u);
  sketch.Add(4, 1);  // evicts 3 (count 3): 4 gets count 4, error 3
  const KeyCount four = sketch.Estimate(4);
  EXPECT_EQ(four.count, 4u);
  EXPECT_EQ(four.error, 3u);
  EXPECT_EQ(sketch.Estimate(3).count, 4u);  // untracked: bounded by the minimum
  EXPECT_EQ(sketch.Estimate(1).count, 5u);
  EXPECT_EQ(sketch.Estimate(2).count, 5u);
  sketch.Add(1, 100);
  EXPECT_EQ(sketch.Estimate(1).count, 105u);
  EXPECT_EQ(sketch.min_count(), 4u);
  uint64_t sum = 0;
  sketch.ForEach([&](const KeyCount& count) { sum += count.count; });
  EXPECT_EQ(sum, 5u + 1 + 3 + 4 + 1 + 100);  // Space-Saving keeps the total exactly
}

}  // namespace
}  // namespace libra::hot
