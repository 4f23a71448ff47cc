// The parts of the worker's side of the hot path (worker_path.h names
// them), each on its own: the sampling phase, the hot/cold split, the
// routes of hot keys to their servers, the values kept for VALUES, and when
// a lagging replica is repaired as a whole.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <random>
#include <vector>

#include "hotpath/messages/sum_check.h"
#include "hotpath/messages/written_keys.h"
#include "hotpath/small_hot_set.h"
#include "hotpath/worker/hot_key_routes.h"
#include "hotpath/worker/hot_split.h"
#include "hotpath/worker/key_sampler.h"
#include "hotpath/worker/replica_lag.h"
#include "hotpath/worker/retained_values.h"
#include "hotpath/worker/server_answers.h"

namespace libra::hotpath {
namespace {

using Parts = ps::WorkerHotPath::Parts;
using testing::SmallHotSet;
using testing::SmallHotSetLength;

Parts PushOf(const std::vector<hot::Key>& keys, const std::vector<int>& lens) {
  Parts push;
  float v = 1;
  for (size_t i = 0; i < keys.size(); ++i) {
    push.keys.push_back(keys[i]);
    if (!lens.empty()) push.lens.push_back(lens[i]);
    const int len = lens.empty() ? 1 : lens[i];
    for (int j = 0; j < len; ++j) push.vals.push_back(v++);
  }
  return push;
}

TEST(KeySampler, CountsEveryPushAndTakesTheHeaviestOnce) {
  KeySampler sampler;
  sampler.Count(PushOf({1, 2, 3}, {1, 2, 1}));
  sampler.Count(PushOf({2, 3}, {2, 1}));
  Parts big = PushOf({3}, {});
  big.vals[0] = -7.5f;
  sampler.Count(big);
  Parts join = PushOf({4}, {});
  join.vals[0] = 9.f;
  sampler.NoteMagnitudes(join);
  EXPECT_EQ(sampler.max_abs(), 9.f);

  const std::vector<KeyCount> taken = sampler.TakeHeaviest(2);
  ASSERT_EQ(taken.size(), 2u);
  EXPECT_EQ(taken[0].key, 2u);  // ascending keys: 2 (2 pushes), 3 (3 pushes)
  EXPECT_EQ(taken[0].updates, 2u);
  EXPECT_EQ(taken[0].value_len, 2u);
  EXPECT_EQ(taken[1].key, 3u);
  EXPECT_EQ(taken[1].updates, 3u);
  EXPECT_EQ(sampler.keys_counted(), 3u);
  EXPECT_EQ(sampler.keys_taken(), 2u);
  EXPECT_TRUE(sampler.TakeHeaviest(10).empty()) << "the counts are forgotten once taken";
}

// Pushes in key order (PS-lite's contract), out of it, and with a key
// twice: every occurrence counted, each key's latest length kept, against a
// map.
TEST(KeySampler, CountsPushesInAnyOrderAsAMapWould) {
  std::mt19937_64 rng(3);
  KeySampler sampler;
  std::map<hot::Key, std::pair<uint64_t, uint32_t>> expected;  // updates, latest length
  for (int p = 0; p < 12; ++p) {
    std::vector<hot::Key> keys;
    for (int i = 0; i < 300; ++i) keys.push_back(rng() % 500);
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    if (p % 3 == 1) std::shuffle(keys.begin(), keys.end(), rng);  // out of order
    if (p % 3 == 2) keys.push_back(keys.front());                 // a key twice
    std::vector<int> lens;
    for (size_t i = 0; i < keys.size(); ++i) lens.push_back(1 + static_cast<int>(rng() % 3));
    sampler.Count(PushOf(keys, lens));
    for (size_t i = 0; i < keys.size(); ++i) {
      ++expected[keys[i]].first;
      expected[keys[i]].second = static_cast<uint32_t>(lens[i]);
    }
  }
  const std::vector<KeyCount> taken = sampler.TakeHeaviest(1000);
  ASSERT_EQ(taken.size(), expected.size());
  size_t i = 0;
  for (const auto& [key, count] : expected) {
    EXPECT_EQ(taken[i].key, key);
    EXPECT_EQ(taken[i].updates, count.first) << key;
    EXPECT_EQ(taken[i].value_len, count.second) << key;
    ++i;
  }
  EXPECT_EQ(sampler.keys_counted(), expected.size());
}

TEST(KeySampler, TheMedianEpochIsTheMedianTimeBetweenPushes) {
  KeySampler sampler;
  const auto start = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
  EXPECT_EQ(sampler.MedianEpochSeconds(), 0) << "no epoch timed yet";
  sampler.NotePushAt(start);
  EXPECT_EQ(sampler.MedianEpochSeconds(), 0) << "one push is no epoch";
  // Epochs of 900 ms (the first: the first pulls of everything), 100, 120
  // and 110 ms: the median is 110 ms, not the mean.
  auto at = start;
  for (const int ms : {900, 100, 120, 110}) {
    at += std::chrono::milliseconds(ms);
    sampler.NotePushAt(at);
  }
  EXPECT_NEAR(sampler.MedianEpochSeconds(), 0.120, 1e-9) << "the upper median of 4";
  sampler.NotePushAt(at - std::chrono::milliseconds(5));  // a clock that went back: not an epoch
  EXPECT_NEAR(sampler.MedianEpochSeconds(), 0.120, 1e-9);
}

TEST(HotSplit, HotKeysOfTheirSampledLengthGoHotInThePushOrder) {
  const auto hot_set = SmallHotSet();
  // 30 is hot with 2 values; pushed with 1 it stays cold. 5 is not hot.
  const Parts push = PushOf({5, 10, 30, 60, 70}, {1, 1, 1, 2, 1});
  Parts hot, cold;
  SplitHotAndCold(*hot_set, push, &hot, &cold);
  EXPECT_EQ(std::vector<hot::Key>(hot.keys.begin(), hot.keys.end()),
            (std::vector<hot::Key>{10, 60, 70}));
  EXPECT_EQ(std::vector<float>(hot.vals.begin(), hot.vals.end()), (std::vector<float>{2, 4, 5, 6}));
  EXPECT_EQ(std::vector<int>(hot.lens.begin(), hot.lens.end()), (std::vector<int>{1, 2, 1}));
  EXPECT_EQ(std::vector<hot::Key>(cold.keys.begin(), cold.keys.end()),
            (std::vector<hot::Key>{5, 30}));
  EXPECT_EQ(std::vector<float>(cold.vals.begin(), cold.vals.end()), (std::vector<float>{1, 3}));
  EXPECT_EQ(cold.lens.size(), 2u) << "the push had lens, so the cold part keeps them";
}

TEST(HotSplit, APushWithoutLensSharesItsValuesEvenlyAndTheColdPartHasNoLens) {
  const auto hot_set = SmallHotSet();
  const Parts push = PushOf({10, 11}, {});
  EXPECT_EQ(ValuesOfKey(push, 0), 1);
  Parts hot, cold;
  SplitHotAndCold(*hot_set, push, &hot, &cold);
  EXPECT_EQ(hot.keys.size(), 1u);
  EXPECT_EQ(hot.lens.size(), 1u);
  EXPECT_EQ(cold.keys.size(), 1u);
  EXPECT_TRUE(cold.lens.empty());
}

TEST(HotSplit, APushOfThePulledKeysSplitsByThePullsEntriesAsByLookups) {
  const auto hot_set = SmallHotSet();
  const Parts push = PushOf({5, 10, 30, 60, 70}, {1, 1, 1, 2, 1});
  const std::span<const hot::Key> keys(push.keys.data(), push.keys.size());
  PulledKeys pulled;
  const auto entries = pulled.Classify(*hot_set, keys);
  ASSERT_EQ(entries.size(), 5u);
  EXPECT_EQ(entries[0].index, hot::HotSet::kCold) << "5 is not hot";
  EXPECT_EQ(entries[3].value_len, 2u) << "60 has two values";
  const auto kept = pulled.EntriesOf(*hot_set, keys);
  ASSERT_TRUE(kept.has_value());
  Parts hot, cold, hot_looked_up, cold_looked_up;
  SplitHotAndCold(*kept, push, &hot, &cold);
  SplitHotAndCold(*hot_set, push, &hot_looked_up, &cold_looked_up);
  auto same = [](const Parts& a, const Parts& b) {
    return std::vector<hot::Key>(a.keys.begin(), a.keys.end()) ==
               std::vector<hot::Key>(b.keys.begin(), b.keys.end()) &&
           std::vector<float>(a.vals.begin(), a.vals.end()) ==
               std::vector<float>(b.vals.begin(), b.vals.end()) &&
           std::vector<int>(a.lens.begin(), a.lens.end()) ==
               std::vector<int>(b.lens.begin(), b.lens.end());
  };
  EXPECT_TRUE(same(hot, hot_looked_up));
  EXPECT_TRUE(same(cold, cold_looked_up));
  EXPECT_EQ(hot.keys.size(), 3u);
  // Each hot key's entry comes out with it, for the sender.
  Parts hot_again, cold_again;
  std::vector<hot::HotSet::Entry> hot_entries;
  SplitHotAndCold(*kept, push, &hot_again, &cold_again, &hot_entries);
  ASSERT_EQ(hot_entries.size(), 3u);
  for (size_t i = 0; i < hot_entries.size(); ++i) {
    EXPECT_EQ(hot_entries[i].index, hot_set->Find(hot_again.keys[i])) << i;
    EXPECT_EQ(hot_entries[i].value_len, static_cast<uint32_t>(hot_again.lens[i])) << i;
  }
}

TEST(HotSplit, OtherKeysOrAnotherHotSetAreLookedUpAgain) {
  const auto hot_set = SmallHotSet();
  const auto other_set = SmallHotSet();
  const std::vector<hot::Key> pulled_keys{10, 30, 60};
  PulledKeys pulled;
  pulled.Classify(*hot_set, pulled_keys);
  EXPECT_TRUE(pulled.EntriesOf(*hot_set, pulled_keys).has_value());
  const std::vector<hot::Key> other{10, 30, 61};
  EXPECT_FALSE(pulled.EntriesOf(*hot_set, other).has_value()) << "one key differs";
  const std::vector<hot::Key> fewer{10, 30};
  EXPECT_FALSE(pulled.EntriesOf(*hot_set, fewer).has_value()) << "a prefix is not the same keys";
  EXPECT_FALSE(pulled.EntriesOf(*other_set, pulled_keys).has_value()) << "another hot set";
  PulledKeys never_pulled;
  EXPECT_FALSE(never_pulled.EntriesOf(*hot_set, pulled_keys).has_value());
  // A pull too large to keep is classified all the same, and not kept.
  std::vector<hot::Key> huge(PulledKeys::kMostKeysKept + 1, 10);
  PulledKeys large;
  const auto huge_entries = large.Classify(*hot_set, huge);
  ASSERT_EQ(huge_entries.size(), huge.size());
  EXPECT_EQ(huge_entries.back().index, hot_set->Find(10));
  EXPECT_FALSE(large.EntriesOf(*hot_set, huge).has_value());
  // Entries of another length than the push's keys are refused.
  const Parts push = PushOf({10, 30}, {1, 1});
  Parts hot, cold;
  const auto three = pulled.EntriesOf(*hot_set, pulled_keys);
  EXPECT_THROW(SplitHotAndCold(*three, push, &hot, &cold), std::invalid_argument);
}

// Keys 10..50 on server 0, 60..100 on server 1, of 3 servers.
HotKeyRoutes TwoOfThreeServers() {
  const auto hot_set = SmallHotSet();
  std::vector<uint32_t> owners;
  for (const hot::HotKey& k : hot_set->keys()) owners.push_back(k.key <= 50 ? 0 : 1);
  return HotKeyRoutes(hot_set, owners, 3);
}

TEST(HotKeyRoutes, AFallbackEpochGivesEveryServerAPushOfItsOwnKeys) {
  const HotKeyRoutes routes = TwoOfThreeServers();
  const std::vector<hot::Key> keys = {10, 60, 30};
  const std::vector<float> vals = {1, 2, 3, 4, 5};  // 60 and 30 take 2 values
  const std::vector<FallbackPush> pushes = routes.SplitByServer(7, 4, keys, vals);
  ASSERT_EQ(pushes.size(), 3u);
  for (const FallbackPush& p : pushes) {
    EXPECT_EQ(p.epoch, 7u);
    EXPECT_EQ(p.worker, 4u);
  }
  EXPECT_EQ(pushes[0].keys, (std::vector<hot::Key>{10, 30}));
  EXPECT_EQ(pushes[0].vals, (std::vector<float>{1, 4, 5}));
  EXPECT_EQ(pushes[1].keys, (std::vector<hot::Key>{60}));
  EXPECT_EQ(pushes[1].vals, (std::vector<float>{2, 3}));
  EXPECT_TRUE(pushes[2].keys.empty()) << "a server without hot keys still counts the worker";
}

TEST(HotKeyRoutes, WrittenKeysNameEachServersKeysByTheirPositionThere) {
  const HotKeyRoutes routes = TwoOfThreeServers();
  const std::vector<hot::Key> keys = {90, 20, 60, 20};  // unsorted, repeated
  const auto hot_set = SmallHotSet();
  std::vector<float> vals;
  std::vector<std::vector<float>> of_key;  // each key's values
  for (const hot::Key key : keys) {
    of_key.emplace_back();
    for (uint32_t j = 0; j < hot_set->keys()[hot_set->Find(key)].value_len; ++j) {
      of_key.back().push_back(0.25f * static_cast<float>(vals.size() + 1));
      vals.push_back(of_key.back().back());
    }
  }
  const SumCheck check(UpdateKey{}, 16);
  const std::vector<HotKeyRoutes::Report> reports = routes.WrittenKeysOf(3, 1, keys, vals, check);
  ASSERT_EQ(reports.size(), 3u);
  EXPECT_FALSE(reports[2].has_keys) << "server 2 owns no hot key";
  ASSERT_TRUE(reports[0].has_keys);
  ASSERT_TRUE(reports[1].has_keys);
  EXPECT_EQ(reports[0].keys.epoch, 3u);
  EXPECT_EQ(reports[0].keys.worker, 1u);
  // Server 0 owns 10..50 (positions 0..4), server 1 60..100.
  std::vector<uint8_t> bitmap(1, 0);
  ASSERT_TRUE(MergeKeySet(reports[0].keys.key_set, 5, bitmap));
  EXPECT_EQ(bitmap[0], 0b00010);  // 20
  bitmap.assign(1, 0);
  ASSERT_TRUE(MergeKeySet(reports[1].keys.key_set, 5, bitmap));
  EXPECT_EQ(bitmap[0], 0b01001);  // 60, 90
  // Each server's term is that of the values of its own keys, a repeated
  // key's values counted each time (the switch adds both).
  EXPECT_EQ(reports[0].keys.sum_term,
            SumCheck::Add(check.KeyTerm(3, 20, of_key[1]), check.KeyTerm(3, 20, of_key[3])));
  EXPECT_EQ(reports[1].keys.sum_term,
            SumCheck::Add(check.KeyTerm(3, 90, of_key[0]), check.KeyTerm(3, 60, of_key[2])));
  EXPECT_NE(reports[0].keys.sum_term, 0u);
  EXPECT_THROW(routes.WrittenKeysOf(3, 1, keys, std::span<const float>(vals).first(2), check),
               std::invalid_argument);
  // The same keys with the caller's lookups: the same reports.
  std::vector<hot::HotSet::Entry> entries;
  for (const hot::Key key : keys) entries.push_back(hot_set->Lookup(key));
  const std::vector<HotKeyRoutes::Report> given =
      routes.WrittenKeysOf(3, 1, keys, vals, check, entries);
  ASSERT_EQ(given.size(), reports.size());
  for (size_t s = 0; s < given.size(); ++s) {
    EXPECT_EQ(given[s].has_keys, reports[s].has_keys) << s;
    EXPECT_EQ(given[s].keys.key_set, reports[s].keys.key_set) << s;
    EXPECT_EQ(given[s].keys.sum_term, reports[s].keys.sum_term) << s;
  }
  EXPECT_THROW(routes.WrittenKeysOf(3, 1, keys, vals, check,
                                    std::span<const hot::HotSet::Entry>(entries).first(3)),
               std::invalid_argument)
      << "one entry short";
}

RetainedPush Kept(uint32_t epoch) {
  RetainedPush push;
  push.epoch = epoch;
  push.keys = {10, 30, 40};
  push.vals = {1, 2, 3, 4};
  push.lens = {1, 2, 1};
  return push;
}

TEST(RetainedValues, TheLastEpochsSentToTheServersAreKept) {
  RetainedValues kept;
  for (uint32_t e = 0; e < RetainedValues::kEpochsKept + 2; ++e) kept.Keep(Kept(e));
  EXPECT_FALSE(kept.Find(0));
  EXPECT_FALSE(kept.Find(1));
  ASSERT_TRUE(kept.Find(2));
  EXPECT_EQ(kept.Find(2)->epoch, 2u);
  EXPECT_TRUE(kept.Find(RetainedValues::kEpochsKept + 1));
}

TEST(RetainedValues, AValuesAnswerHoldsTheAskedKeysWithTheirValues) {
  const RetainedPush push = Kept(5);
  const std::vector<hot::Key> asked = {30, 99};
  const FallbackPush answer = ValuesOfKeys(&push, 2, asked);
  EXPECT_EQ(answer.epoch, 5u);
  EXPECT_EQ(answer.worker, 2u);
  EXPECT_EQ(answer.keys, (std::vector<hot::Key>{30}));
  EXPECT_EQ(answer.vals, (std::vector<float>{2, 3}));
  const FallbackPush none = ValuesOfKeys(nullptr, 2, asked);
  EXPECT_EQ(none.epoch, FallbackPush::kNotRetained);
  EXPECT_TRUE(none.keys.empty());
}

TEST(ReplicaLag, AReplicaMoreThanAnEpochBehindLags) {
  EXPECT_FALSE(ReplicaLag::LaggingEpoch(std::nullopt, 4, 4)) << "nothing pushed past the first";
  EXPECT_EQ(ReplicaLag::LaggingEpoch(std::nullopt, 5, 4), 4u) << "no epoch reached yet";
  EXPECT_FALSE(ReplicaLag::LaggingEpoch(8, 9, 4)) << "one epoch behind: being aggregated";
  EXPECT_EQ(ReplicaLag::LaggingEpoch(6, 9, 4), 7u);
}

TEST(ReplicaLag, OnlyAnUnbrokenLagOfTheWholeTimeRepairs) {
  using std::chrono::milliseconds;
  ReplicaLag lag(milliseconds(100));
  const ReplicaLag::Clock::time_point t0{};
  EXPECT_FALSE(lag.Observe(t0, 7));
  EXPECT_FALSE(lag.Observe(t0 + milliseconds(99), 7));
  EXPECT_FALSE(lag.Observe(t0 + milliseconds(100), std::nullopt)) << "caught up: starts over";
  EXPECT_FALSE(lag.Observe(t0 + milliseconds(150), 8));
  EXPECT_FALSE(lag.Observe(t0 + milliseconds(249), 8));
  EXPECT_EQ(lag.Observe(t0 + milliseconds(250), 9), 9u) << "the epoch it lags at now";
  EXPECT_FALSE(lag.Observe(t0 + milliseconds(251), 9)) << "after a repair it counts again";
  EXPECT_EQ(lag.Observe(t0 + milliseconds(351), 9), 9u);
}

TEST(ServerAnswers, EachServersAnswerGoesBackInTheOrderAsked) {
  const auto hot_set = SmallHotSet();
  std::vector<Repair> answers(2);
  answers[0] = {3, {10, 30}, {1, 2, 3}};
  answers[1] = {3, {60}, {4, 5}};
  const std::vector<hot::Key> keys = {60, 10, 30};
  Parts out;
  std::string error;
  ASSERT_TRUE(ValuesFromAnswers(*hot_set, keys, answers, &out, &error)) << error;
  EXPECT_EQ(std::vector<float>(out.vals.begin(), out.vals.end()),
            (std::vector<float>{4, 5, 1, 2, 3}));
  EXPECT_EQ(std::vector<int>(out.lens.begin(), out.lens.end()), (std::vector<int>{2, 1, 2}));
}

TEST(ServerAnswers, AMissingKeyOrAShortAnswerIsNamed) {
  const auto hot_set = SmallHotSet();
  const std::vector<hot::Key> keys = {10, 60};
  Parts out;
  std::string error;
  EXPECT_FALSE(ValuesFromAnswers(*hot_set, keys, {{3, {10}, {1}}}, &out, &error));
  EXPECT_EQ(error, "no server answered for hot key 60");
  Parts short_out;
  EXPECT_FALSE(ValuesFromAnswers(*hot_set, keys, {{3, {10, 60}, {1, 2}}}, &short_out, &error));
  EXPECT_EQ(error, "a short answer for hot key 60");
}

}  // namespace
}  // namespace libra::hotpath
