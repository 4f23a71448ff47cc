// The parts of the server's side of the hot path (server_path.cpp names
// them), each on its own: the copy of the published values that answers
// REPAIRs, and the exact sums of saturated keys.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <random>
#include <vector>

#include "hot/placement.h"
#include "hotpath/server/published_values.h"
#include "hotpath/server/saturated_sums.h"
#include "hotpath/small_hot_set.h"

namespace libra::hotpath {
namespace {

using testing::SmallHotSet;

// The server owns 20, 30 (2 values) and 40.
PublishedValues Owning20To40() {
  PublishedValues published;
  published.Reset(*SmallHotSet(), {20, 30, 40});
  return published;
}

TEST(PublishedValues, NothingIsAnsweredBeforeEveryValueIsPublished) {
  PublishedValues published = Owning20To40();
  EXPECT_EQ(published.num_values(), 4u);
  EXPECT_EQ(published.lens(), (std::vector<int>{1, 2, 1}));
  EXPECT_FALSE(published.current());
  Repair answer;
  const std::vector<hot::Key> asked = {20};
  published.Fill(asked, &answer);
  EXPECT_TRUE(answer.keys.empty());
  const std::vector<float> short_of_one = {1, 2, 3};
  EXPECT_FALSE(published.SetAll(short_of_one));
  EXPECT_FALSE(published.current());
}

TEST(PublishedValues, AnEpochUpdatesOnlyItsKeysAndARepairGetsTheOwnedOnes) {
  PublishedValues published = Owning20To40();
  const std::vector<float> all = {1, 2, 3, 4};
  ASSERT_TRUE(published.SetAll(all));
  ASSERT_TRUE(published.current());
  // 30 changes; 50 is not this server's and is skipped.
  const std::vector<hot::Key> keys = {30, 50};
  const std::vector<int> lens = {2, 1};
  const std::vector<float> vals = {7, 8, 9};
  published.Update(SmallHotSet()->LookupAll(keys), lens, vals);
  Repair answer;
  const std::vector<hot::Key> asked = {40, 30, 10, 20};
  published.Fill(asked, &answer);
  EXPECT_EQ(answer.keys, (std::vector<hot::Key>{40, 30, 20}));
  EXPECT_EQ(answer.vals, (std::vector<float>{4, 7, 8, 1}));
  EXPECT_EQ(published.IndexOf(30), 1u);
  EXPECT_EQ(published.IndexOf(31), 3u);
  published.Clear();
  EXPECT_FALSE(published.current()) << "a failed publish makes the next epoch publish all";
}

TEST(PublishedValues, UpdatesInAnyOrderLandOnTheirKeys) {
  // 900 hot keys of 1-3 values; the server owns every third. Epochs change
  // ascending runs (as the collector gives them), shuffled ones, and keys
  // it does not own; a plain map of what each key should hold checks all.
  std::vector<hot::HotKey> hot_keys;
  for (std::uint32_t k = 0; k < 900; ++k) hot_keys.push_back({100 + 7 * k, 1 + k % 3, 1000u - k});
  const hot::HotSet set =
      hot::PlaceHotSet(hot_keys, hot::SwitchLayout{8, 512, 2}, hot::HeatPlacement());
  std::vector<hot::Key> owned;
  for (std::size_t k = 0; k < hot_keys.size(); k += 3) owned.push_back(hot_keys[k].key);
  PublishedValues published;
  published.Reset(set, owned);
  ASSERT_TRUE(published.SetAll(std::vector<float>(published.num_values(), 0.0f)));
  std::map<hot::Key, std::vector<float>> expected;
  for (const hot::Key key : owned) expected[key].assign(set.Lookup(key).value_len, 0.0f);
  std::mt19937 rng(5);
  float next = 1;
  for (int round = 0; round < 60; ++round) {
    std::vector<hot::Key> keys;
    const unsigned keep = 1 + rng() % 40;  // sparse to dense epochs
    for (const hot::HotKey& key : hot_keys) {
      if (rng() % keep == 0) keys.push_back(key.key);
    }
    if (keys.empty()) continue;
    if (round % 3 == 1) std::shuffle(keys.begin(), keys.end(), rng);
    if (round % 3 == 2) std::reverse(keys.begin(), keys.end());
    std::vector<int> lens;
    std::vector<float> vals;
    for (const hot::Key key : keys) {
      lens.push_back(static_cast<int>(set.Lookup(key).value_len));
      std::vector<float> of_key;
      for (int v = 0; v < lens.back(); ++v) of_key.push_back(next++);
      vals.insert(vals.end(), of_key.begin(), of_key.end());
      if (expected.count(key) != 0) expected[key] = of_key;
    }
    published.Update(set.LookupAll(keys), lens, vals);
    Repair answer;
    published.Fill(owned, &answer);
    ASSERT_EQ(answer.keys, owned) << round;
    std::vector<float> want;
    for (const hot::Key key : owned)
      want.insert(want.end(), expected[key].begin(), expected[key].end());
    ASSERT_EQ(answer.vals, want) << round;
  }
}

CollectedEpoch SaturatedEpoch() {
  CollectedEpoch epoch;
  epoch.epoch = 4;
  epoch.keys = {10, 30};
  epoch.lens = {1, 2};
  epoch.vals = {0.5f, 100.f, 100.f};  // 30's two values clamped
  epoch.saturated_keys = {30};
  return epoch;
}

TEST(SaturatedSums, TheClampedKeysAreSummedFromEveryWorkersValues) {
  const auto hot_set = SmallHotSet();
  std::vector<FallbackPush> answers(2);
  answers[0] = {4, 0, {30}, {1000.f, -3.f}};
  answers[1] = {4, 1, {30}, {2000.f, -4.f}};
  ASSERT_TRUE(EveryWorkerAnswered(answers, 2));
  CollectedEpoch epoch = SaturatedEpoch();
  EXPECT_EQ(SumSaturatedExactly(*hot_set, 8, answers, &epoch), 0u);
  EXPECT_EQ(epoch.vals, (std::vector<float>{0.5f, 3000.f, -7.f})) << "10 kept its switch sum";
}

TEST(SaturatedSums, AWorkerThatNoLongerHasTheEpochLeavesTheSumsClamped) {
  std::vector<FallbackPush> answers(2);
  answers[0] = {4, 0, {30}, {1.f, 1.f}};
  answers[1] = {FallbackPush::kNotRetained, 1, {}, {}};
  EXPECT_FALSE(EveryWorkerAnswered(answers, 2));
  EXPECT_FALSE(EveryWorkerAnswered({answers[0]}, 2)) << "one answer of two workers";
}

// A value beyond 64 bits at the scale: its sum is the float sum, in double
// precision, not a clamp.
TEST(SaturatedSums, ASumBeyondSixtyFourBitsIsSummedInDoublePrecision) {
  const auto hot_set = SmallHotSet();
  const float huge = std::numeric_limits<float>::max();
  std::vector<FallbackPush> answers = {{4, 0, {30}, {huge, 1.f}}, {4, 1, {30}, {-3e12f, 2.f}}};
  CollectedEpoch epoch = SaturatedEpoch();
  EXPECT_EQ(SumSaturatedExactly(*hot_set, 16, answers, &epoch), 1u);
  EXPECT_EQ(epoch.vals[1], static_cast<float>(double{huge} - 3e12)) << "30's first value";
  EXPECT_EQ(epoch.vals[2], 3.f);
}

}  // namespace
}  // namespace libra::hotpath
