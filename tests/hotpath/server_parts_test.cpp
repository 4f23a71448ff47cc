// The parts of the server's side of the hot path (server_path.cpp names
// them), each on its own: the copy of the published values that answers
// REPAIRs, and the exact sums of saturated keys.
#include <gtest/gtest.h>

#include <limits>
#include <vector>

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
  published.Update(keys, lens, vals);
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

TEST(SaturatedSums, ASumBeyondSixtyFourBitsIsCountedAsStillClamped) {
  const auto hot_set = SmallHotSet();
  const float huge = std::numeric_limits<float>::max();
  std::vector<FallbackPush> answers = {{4, 0, {30}, {huge, 1.f}}};
  CollectedEpoch epoch = SaturatedEpoch();
  EXPECT_EQ(SumSaturatedExactly(*hot_set, 16, answers, &epoch), 1u);
  EXPECT_EQ(epoch.vals[2], 1.f);
}

}  // namespace
}  // namespace libra::hotpath
