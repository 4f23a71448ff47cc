// FallbackAggregator: a server's sums of the workers' hot values while the
// switch is down. The test against the switch itself, bit for bit, is in
// hotpath_switchd_test.cpp (every epoch of every shape is also summed here);
// these are the rules of the sum and of the pushes it refuses.
#include "hotpath/server/fallback_aggregator.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "hot/placement.h"
#include "hotpath/small_hot_set.h"

namespace libra::hotpath {
namespace {

using hot::Key;

constexpr int kScale = 16;

// Keys 10, 20, ... 100; every third takes 2 values.
std::shared_ptr<const hot::HotSet> MakeHotSet() { return testing::SmallHotSet(); }

std::uint32_t Bits(float f) { return std::bit_cast<std::uint32_t>(f); }

// The switch's sum of one cell's values, written out: each value through the
// exponent table, a saturating add, the sum through the leading-one table.
float SwitchSum(const std::vector<float>& values) {
  const dataplane::FixedPointCodec codec(kScale);
  std::int32_t sum = 0;
  for (const float v : values) {
    sum = dataplane::SaturatingAdd(sum, codec.ToFixed(Bits(v)).value).value;
  }
  return std::bit_cast<float>(codec.ToFloatBits(sum));
}

TEST(FallbackAggregator, AnEpochIsDoneWhenEveryWorkerPushedAndHoldsTheWrittenKeysAscending) {
  const auto set = MakeHotSet();
  const std::vector<Key> owned = {30, 10, 20, 60};  // any order
  FallbackAggregator sums(set, owned, 3, kScale);
  EXPECT_FALSE(sums.Add(5, 0, std::vector<Key>{20, 10}, std::vector<float>{0.5f, 0.25f}));
  EXPECT_FALSE(sums.Add(5, 2, std::vector<Key>{}, std::vector<float>{}));  // nothing of ours
  EXPECT_EQ(sums.pending_epochs(), 1u);
  const auto done =
      sums.Add(5, 1, std::vector<Key>{30, 10}, std::vector<float>{1.0f, -2.0f, 0.125f});
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(sums.pending_epochs(), 0u);
  EXPECT_EQ(done->epoch, 5u);
  EXPECT_EQ(done->status, HotPathStatus::kOk);
  EXPECT_EQ(done->num_merged, 3u);
  EXPECT_EQ(done->keys, (std::vector<hot::Key>{10, 20, 30}));  // 60: nobody pushed it
  EXPECT_EQ(done->lens, (std::vector<int>{1, 1, 2}));
  ASSERT_EQ(done->vals.size(), 4u);
  EXPECT_EQ(Bits(done->vals[0]), Bits(SwitchSum({0.25f, 0.125f})));
  EXPECT_EQ(Bits(done->vals[1]), Bits(SwitchSum({0.5f})));
  EXPECT_EQ(Bits(done->vals[2]), Bits(SwitchSum({1.0f})));
  EXPECT_EQ(Bits(done->vals[3]), Bits(SwitchSum({-2.0f})));
  EXPECT_TRUE(done->saturated_keys.empty());
}

// Integer sums: the order the workers' pushes arrive in does not matter.
TEST(FallbackAggregator, TheOrderOfThePushesDoesNotChangeABit) {
  const auto set = MakeHotSet();
  std::vector<Key> owned;
  for (const hot::HotKey& k : set->keys()) owned.push_back(k.key);
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> value(-3.0f, 3.0f);
  std::vector<std::vector<float>> pushes(5);
  for (auto& push : pushes) {
    for (std::uint32_t v = 0; v < set->num_values(); ++v) push.push_back(value(rng) / 7.0f);
  }
  std::vector<std::uint32_t> order = {0, 1, 2, 3, 4};
  std::optional<CollectedEpoch> first;
  for (int trial = 0; trial < 4; ++trial) {
    FallbackAggregator sums(set, owned, 5, kScale);
    std::optional<CollectedEpoch> done;
    for (const std::uint32_t w : order) done = sums.Add(0, w, owned, pushes[w]);
    ASSERT_TRUE(done.has_value());
    if (!first) {
      first = done;
    } else {
      ASSERT_EQ(done->vals.size(), first->vals.size());
      for (std::size_t v = 0; v < done->vals.size(); ++v) {
        EXPECT_EQ(Bits(done->vals[v]), Bits(first->vals[v])) << "value " << v;
      }
    }
    std::shuffle(order.begin(), order.end(), rng);
  }
}

// As on the switch: a value too large for the scale saturates, a sum that
// overflows is clamped, an infinity or NaN adds nothing; each flags its key
// so that the server knows the sum is not exact.
TEST(FallbackAggregator, SaturatedAndRejectedValuesFlagTheirKey) {
  const auto set = MakeHotSet();
  const std::vector<Key> owned = {10, 20, 40, 50};
  FallbackAggregator sums(set, owned, 2, kScale);
  const float big = std::ldexp(1.0f, 14);  // 2^14 * 2^16 = 2^30: fits, twice does not
  const float nan = std::numeric_limits<float>::quiet_NaN();
  ASSERT_FALSE(sums.Add(1, 0, std::vector<Key>{10, 20, 40, 50},
                        std::vector<float>{big, 1.0f, std::ldexp(1.0f, 20), 2.0f}));
  const auto done =
      sums.Add(1, 1, std::vector<Key>{10, 20, 50}, std::vector<float>{big, nan, 0.5f});
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->saturated_keys, (std::vector<hot::Key>{10, 20, 40}));
  EXPECT_EQ(done->vals[0], std::ldexp(1.0f, 15));           // INT32_MAX / 2^16, rounded
  EXPECT_EQ(Bits(done->vals[1]), Bits(SwitchSum({1.0f})));  // the NaN added nothing
  EXPECT_EQ(done->vals[2], std::ldexp(1.0f, 15));
  EXPECT_EQ(Bits(done->vals[3]), Bits(SwitchSum({2.0f, 0.5f})));
}

TEST(FallbackAggregator, PushesThatDoNotFitAreRefusedAndLeaveNoTrace) {
  const auto set = MakeHotSet();
  const std::vector<Key> owned = {10, 20, 30};
  FallbackAggregator sums(set, owned, 2, kScale);
  std::string error;
  auto refused = [&](std::uint32_t epoch, std::uint32_t worker, std::vector<Key> keys,
                     std::vector<float> vals) {
    error.clear();
    return !sums.Add(epoch, worker, keys, vals, &error) && !error.empty();
  };
  EXPECT_TRUE(refused(0, 2, {10}, {1.0f}));  // no worker 2
  EXPECT_NE(error.find("worker 2"), std::string::npos) << error;
  EXPECT_TRUE(refused(0, 0, {40}, {1.0f}));  // hot, but another server's
  EXPECT_NE(error.find("key 40"), std::string::npos) << error;
  EXPECT_TRUE(refused(0, 0, {99}, {1.0f}));            // not hot at all
  EXPECT_TRUE(refused(0, 0, {10, 10}, {1.0f, 1.0f}));  // a key twice
  EXPECT_TRUE(refused(0, 0, {30}, {1.0f}));            // key 30 takes 2 values
  EXPECT_EQ(sums.pending_epochs(), 0u);

  EXPECT_FALSE(sums.Add(0, 0, std::vector<Key>{10}, std::vector<float>{1.0f}, &error));
  EXPECT_EQ(error, "");
  EXPECT_TRUE(refused(0, 0, {20}, {1.0f}));  // worker 0 again
  EXPECT_NE(error.find("twice"), std::string::npos) << error;
  const auto done = sums.Add(0, 1, std::vector<Key>{10}, std::vector<float>{2.0f}, &error);
  ASSERT_TRUE(done.has_value()) << error;
  EXPECT_EQ(done->keys, (std::vector<hot::Key>{10}));  // nothing of the refused pushes
  EXPECT_EQ(done->vals, (std::vector<float>{3.0f}));
}

// An epoch the switch delivered after all: its pushes are dropped, and late
// ones refused.
TEST(FallbackAggregator, ForgottenEpochsAreDroppedAndRefused) {
  const auto set = MakeHotSet();
  const std::vector<Key> owned = {10};
  FallbackAggregator sums(set, owned, 2, kScale);
  EXPECT_FALSE(sums.Add(3, 0, std::vector<Key>{10}, std::vector<float>{1.0f}));
  EXPECT_FALSE(sums.Add(4, 0, std::vector<Key>{10}, std::vector<float>{1.0f}));
  sums.Forget(3);
  EXPECT_EQ(sums.pending_epochs(), 1u);  // epoch 4 stays
  std::string error;
  EXPECT_FALSE(sums.Add(3, 1, std::vector<Key>{10}, std::vector<float>{1.0f}, &error));
  EXPECT_NE(error.find("already applied"), std::string::npos) << error;
  EXPECT_TRUE(sums.Add(4, 1, std::vector<Key>{10}, std::vector<float>{1.0f}).has_value());
}

TEST(FallbackAggregator, BadSetupsAreRefused) {
  const auto set = MakeHotSet();
  EXPECT_THROW(FallbackAggregator(set, std::vector<Key>{10}, 0, kScale), std::invalid_argument);
  EXPECT_THROW(FallbackAggregator(set, std::vector<Key>{11}, 2, kScale), std::invalid_argument);
  EXPECT_THROW(FallbackAggregator(set, std::vector<Key>{10, 10}, 2, kScale), std::invalid_argument);
  EXPECT_THROW(FallbackAggregator(set, std::vector<Key>{10}, 2, 99), std::invalid_argument);
}

}  // namespace
}  // namespace libra::hotpath
