// The check of the switch's sums: the workers' terms against the sums
// (messages/sum_check.h), and the server's use of it
// (server/switch_sum_check.h).
#include "hotpath/messages/sum_check.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <vector>

#include "hotpath/server/fallback_aggregator.h"
#include "hotpath/server/switch_sum_check.h"
#include "hotpath/small_hot_set.h"

namespace libra::hotpath {
namespace {

constexpr int kScale = 16;

UpdateKey KeyOf(uint8_t first) {
  UpdateKey key;
  key.bytes[0] = first;
  return key;
}

TEST(SumCheck, TheWorkersTermsAddUpToTheTermOfTheirSums) {
  const SumCheck check(KeyOf(1), kScale);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> value(-3.f, 3.f);
  const std::vector<hot::Key> keys = {4, 9, 1ull << 40};
  const std::vector<int> lens = {1, 3, 2};
  std::vector<int64_t> sums(6, 0);
  uint64_t terms = 0;
  for (int worker = 0; worker < 4; ++worker) {
    std::vector<float> vals;
    for (int v = 0; v < 6; ++v) vals.push_back(value(rng));
    for (int v = 0; v < 6; ++v) sums[v] += check.AddedValue(vals[v]);
    terms = SumCheck::Add(terms, check.TermOf(7, keys, lens, vals));
  }
  uint64_t of_sums = 0;
  for (size_t i = 0, v = 0; i < keys.size(); ++i) {
    for (int j = 0; j < lens[i]; ++j, ++v) {
      of_sums = SumCheck::Add(of_sums, check.Term(7, keys[i], j, sums[v]));
    }
  }
  EXPECT_EQ(terms, of_sums);
  EXPECT_NE(terms, 0u);

  // Any change of a sum breaks the equality: by one unit, by a power of
  // two, in another cell, or the sums of another epoch, key or job key.
  for (const int64_t delta : {int64_t{1}, int64_t{-1}, int64_t{1} << 20, int64_t{1} << 31}) {
    EXPECT_NE(SumCheck::Add(of_sums, check.Term(7, keys[1], 2, delta)), terms) << delta;
  }
  EXPECT_NE(check.Term(8, keys[0], 0, sums[0]), check.Term(7, keys[0], 0, sums[0]));
  EXPECT_NE(check.Term(7, keys[0] + 1, 0, sums[0]), check.Term(7, keys[0], 0, sums[0]));
  EXPECT_NE(check.Term(7, keys[1], 1, sums[1]), check.Term(7, keys[1], 0, sums[1]));
  EXPECT_NE(SumCheck(KeyOf(2), kScale).Term(7, keys[0], 0, sums[0]),
            check.Term(7, keys[0], 0, sums[0]));
  EXPECT_THROW(check.TermOf(7, keys, lens, std::vector<float>(5, 1.f)), std::invalid_argument);
  EXPECT_THROW(check.TermOf(7, keys, lens, std::vector<float>(7, 1.f)), std::invalid_argument);
}

TEST(SumCheck, ValuesAreAddedAsTheSwitchAddsThem) {
  const SumCheck check(KeyOf(1), kScale);
  EXPECT_EQ(check.AddedValue(1.5f), 3 << 15);
  EXPECT_EQ(check.AddedValue(-0.25f), -(1 << 14));
  EXPECT_EQ(check.AddedValue(std::numeric_limits<float>::quiet_NaN()), 0) << "rejected";
  EXPECT_EQ(check.AddedValue(std::numeric_limits<float>::infinity()), 0) << "rejected";
  EXPECT_EQ(check.AddedValue(1e9f), std::numeric_limits<int32_t>::max()) << "saturated";
  EXPECT_EQ(check.AddedValue(-1e9f), -std::numeric_limits<int32_t>::max());
}

// Two workers' pushes of SmallHotSet's keys (10..100) in one epoch, the
// epoch as an honest switch sums it (FallbackAggregator has its arithmetic),
// and each worker's term and answers.
struct Epoch {
  static constexpr uint32_t kEpoch = 3;
  std::shared_ptr<const hot::HotSet> hot_set = testing::SmallHotSet();
  std::vector<hot::Key> owned;
  std::vector<FallbackPush> pushes;  // per worker: its values of its keys
  CollectedEpoch collected;
  SumCheck check{UpdateKey{}, kScale};

  explicit Epoch(float big = 0.f) {
    for (const hot::HotKey& k : hot_set->keys()) owned.push_back(k.key);
    const std::vector<std::vector<hot::Key>> keys = {{10, 20, 30, 60}, {20, 30, 90}};
    for (uint32_t w = 0; w < keys.size(); ++w) {
      FallbackPush push;
      push.epoch = kEpoch;
      push.worker = w;
      for (const hot::Key key : keys[w]) {
        push.keys.push_back(key);
        for (int j = 0; j < testing::SmallHotSetLength(key); ++j) {
          push.vals.push_back(0.125f * static_cast<float>(key / 10 + j + w));
        }
      }
      pushes.push_back(push);
    }
    pushes[0].vals[1] += big;  // key 20: makes its sum as large as asked
    FallbackAggregator sums(hot_set, owned, 2, kScale);
    for (const FallbackPush& push : pushes) {
      std::optional<CollectedEpoch> done =
          sums.Add(kEpoch, push.worker, push.keys, push.vals, nullptr);
      if (done) collected = *done;
    }
    collected.from_switch = true;
    // The fixed-point sums the switch's RESULTs carry: each worker's added
    // value, summed and clamped as the switch's aggregate stage does.
    size_t v = 0;
    for (size_t i = 0; i < collected.keys.size(); ++i) {
      for (int j = 0; j < collected.lens[i]; ++j, ++v) {
        int64_t sum = 0;
        for (const FallbackPush& push : pushes) {
          size_t offset = 0;
          for (const hot::Key key : push.keys) {
            if (key == collected.keys[i]) sum += check.AddedValue(push.vals[offset + j]);
            offset += static_cast<size_t>(testing::SmallHotSetLength(key));
          }
        }
        constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
        collected.fixed.push_back(static_cast<int32_t>(std::clamp(sum, -kMax, kMax)));
      }
    }
  }
  uint64_t TermOf(uint32_t worker) const {
    std::vector<int> lens;
    for (const hot::Key key : pushes[worker].keys) lens.push_back(testing::SmallHotSetLength(key));
    return check.TermOf(kEpoch, pushes[worker].keys, lens, pushes[worker].vals);
  }
  // Every worker's values of `keys`, as VALUES answers them.
  std::vector<FallbackPush> Answers(const std::vector<hot::Key>& keys) const {
    std::vector<FallbackPush> answers;
    for (const FallbackPush& push : pushes) {
      FallbackPush answer;
      answer.epoch = push.epoch;
      answer.worker = push.worker;
      size_t offset = 0;
      for (const hot::Key key : push.keys) {
        const size_t len = static_cast<size_t>(testing::SmallHotSetLength(key));
        if (std::find(keys.begin(), keys.end(), key) != keys.end()) {
          answer.keys.push_back(key);
          answer.vals.insert(answer.vals.end(), push.vals.begin() + offset,
                             push.vals.begin() + offset + len);
        }
        offset += len;
      }
      answers.push_back(answer);
    }
    return answers;
  }
  SwitchSumCheck Checker() const {
    SwitchSumCheck checker(hot_set, 2, UpdateKey{}, kScale);
    EXPECT_TRUE(checker.AddTerm(kEpoch, 0, TermOf(0)));
    EXPECT_TRUE(checker.AddTerm(kEpoch, 1, TermOf(1)));
    return checker;
  }
};

TEST(SwitchSumCheck, AnHonestEpochAgreesAsItIs) {
  const Epoch e;
  const SwitchSumCheck checker = e.Checker();
  ASSERT_TRUE(checker.HasAllTerms(Epoch::kEpoch));
  EXPECT_TRUE(checker.KeysToSumFromValues(e.collected).empty());
  CollectedEpoch epoch = e.collected;
  EXPECT_TRUE(checker.Check(&epoch, {}, {}));
  EXPECT_EQ(epoch.keys, e.collected.keys);
  EXPECT_EQ(epoch.vals, e.collected.vals);
  EXPECT_EQ(epoch.lens, e.collected.lens);
}

TEST(SwitchSumCheck, AChangedAddedOrMissingSumDisagrees) {
  const Epoch e;
  const SwitchSumCheck checker = e.Checker();
  CollectedEpoch changed = e.collected;
  changed.fixed[2] += 1;  // one step of the fixed point
  ASSERT_TRUE(checker.KeysToSumFromValues(changed).empty());
  EXPECT_FALSE(checker.Check(&changed, {}, {}));

  CollectedEpoch missing = e.collected;  // key 10 (one value) left out
  ASSERT_EQ(missing.keys.front(), 10u);
  missing.keys.erase(missing.keys.begin());
  missing.lens.erase(missing.lens.begin());
  missing.vals.erase(missing.vals.begin());
  missing.fixed.erase(missing.fixed.begin());
  EXPECT_FALSE(checker.Check(&missing, {}, {}));

  CollectedEpoch added = e.collected;  // key 40, which nobody pushed
  const auto at = std::find(added.keys.begin(), added.keys.end(), 60u) - added.keys.begin();
  size_t offset = 0;
  for (long i = 0; i < at; ++i) offset += static_cast<size_t>(added.lens[i]);
  added.keys.insert(added.keys.begin() + at, 40);
  added.lens.insert(added.lens.begin() + at, 1);
  added.vals.insert(added.vals.begin() + static_cast<long>(offset), 0.5f);
  added.fixed.insert(added.fixed.begin() + static_cast<long>(offset), 1 << 15);
  EXPECT_FALSE(checker.Check(&added, {}, {}));

  // Sums without their fixed point (not a RESULT's) are never taken.
  CollectedEpoch floats_only = e.collected;
  floats_only.fixed.clear();
  EXPECT_FALSE(checker.Check(&floats_only, {}, {}));

  // Without every worker's term nothing is taken as checked.
  SwitchSumCheck one_term(e.hot_set, 2, UpdateKey{}, kScale);
  one_term.AddTerm(Epoch::kEpoch, 0, e.TermOf(0));
  EXPECT_FALSE(one_term.HasAllTerms(Epoch::kEpoch));
  CollectedEpoch honest = e.collected;
  EXPECT_FALSE(one_term.Check(&honest, {}, {}));
}

TEST(SwitchSumCheck, ALargeSumIsCheckedExactlyWithoutTheWorkersValues) {
  const Epoch e(/*big=*/300.f);  // key 20's sum: above 2^24 at scale 2^16
  const size_t at_20 = 1;        // key 10 takes one value
  ASSERT_GE(e.collected.fixed[at_20], 1 << 24);
  const SwitchSumCheck checker = e.Checker();
  EXPECT_TRUE(checker.KeysToSumFromValues(e.collected).empty()) << "no VALUES round trip";
  CollectedEpoch honest = e.collected;
  EXPECT_TRUE(checker.Check(&honest, {}, {}));
  EXPECT_EQ(honest.vals, e.collected.vals);

  // One step away (to the neighbour that rounds alike) is the same float32,
  // but not the same sum.
  CollectedEpoch forged = e.collected;
  forged.fixed[at_20] += forged.fixed[at_20] % 2 != 0 ? 1 : -1;
  const dataplane::FixedPointCodec codec(kScale);
  ASSERT_EQ(codec.ToFloatBits(forged.fixed[at_20]), codec.ToFloatBits(e.collected.fixed[at_20]));
  EXPECT_FALSE(checker.Check(&forged, {}, {}));
}

TEST(SwitchSumCheck, ASaturatedKeyIsSummedFromValuesAndStaysSaturated) {
  const Epoch e(/*big=*/40000.f);  // beyond 2^15, the largest value at 2^16
  ASSERT_EQ(e.collected.saturated_keys, (std::vector<hot::Key>{20}));
  const SwitchSumCheck checker = e.Checker();
  const std::vector<hot::Key> from_values = checker.KeysToSumFromValues(e.collected);
  ASSERT_EQ(from_values, (std::vector<hot::Key>{20}));
  CollectedEpoch epoch = e.collected;
  EXPECT_TRUE(checker.Check(&epoch, from_values, e.Answers(from_values)));
  EXPECT_EQ(epoch.saturated_keys, (std::vector<hot::Key>{20}))
      << "left for the exact sum (saturated_sums.h)";

  // A forged sum of a saturated key is replaced with the workers' sum.
  CollectedEpoch forged = e.collected;
  const size_t at_20 = 1;  // key 10 takes one value
  forged.vals[at_20] = 512.f;
  forged.fixed[at_20] = 512 << kScale;
  EXPECT_TRUE(checker.Check(&forged, from_values, e.Answers(from_values)));
  EXPECT_EQ(forged.vals, epoch.vals);

  // An answer that leaves out a value the worker pushed does not agree.
  std::vector<FallbackPush> short_answers = e.Answers(from_values);
  short_answers[1].keys.clear();
  short_answers[1].vals.clear();
  CollectedEpoch again = e.collected;
  EXPECT_FALSE(checker.Check(&again, from_values, short_answers));
}

TEST(SwitchSumCheck, TermsAreTakenOncePerWorkerAndEpochAndForgotten) {
  const Epoch e;
  SwitchSumCheck checker(e.hot_set, 2, UpdateKey{}, kScale);
  EXPECT_TRUE(checker.AddTerm(5, 0, 1));
  EXPECT_FALSE(checker.AddTerm(5, 0, 2)) << "a second term of worker 0";
  EXPECT_FALSE(checker.AddTerm(5, 2, 1)) << "no worker 2";
  EXPECT_FALSE(checker.AddTerm(5, 1, SumCheck::kPrime)) << "not in the field";
  EXPECT_TRUE(checker.AddTerm(5, 1, 0));
  EXPECT_TRUE(checker.HasAllTerms(5));
  checker.Forget(5);
  EXPECT_FALSE(checker.HasAllTerms(5));
  EXPECT_FALSE(checker.AddTerm(4, 0, 1)) << "forgotten";
  for (uint32_t epoch = 6; epoch < 6 + SwitchSumCheck::kMaxPendingEpochs; ++epoch) {
    ASSERT_TRUE(checker.AddTerm(epoch, 0, 1));
  }
  EXPECT_FALSE(checker.AddTerm(6 + SwitchSumCheck::kMaxPendingEpochs, 0, 1)) << "bounded";
  EXPECT_TRUE(checker.AddTerm(6, 1, 1)) << "an epoch kept still takes terms";
}

}  // namespace
}  // namespace libra::hotpath
