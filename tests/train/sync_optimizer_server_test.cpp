// The servers' BSP request handle, driven directly (no network): held
// responses, rank-order merging, num_merged, and bad pushes.
#include "train/sync_optimizer_server.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include "ps/internal/postoffice.h"
#include "train/batch.h"
#include "train/bsp_round.h"
#include "train/every_server_slicer.h"
#include "train/job_plan.h"

namespace libra::train {
namespace {

using Keys = std::vector<ps::Key>;
using Values = std::vector<float>;

int Worker(int rank) { return ps::Postoffice::WorkerRankToID(rank); }

ps::KVMeta PushMeta(int sender, int num_merged = 1, int timestamp = 0) {
  ps::KVMeta meta{};
  meta.push = true;
  meta.pull = false;
  meta.sender = sender;
  meta.timestamp = timestamp;
  meta.num_merged = num_merged;
  return meta;
}

ps::KVMeta PullMeta(int sender) {
  ps::KVMeta meta{};
  meta.push = false;
  meta.pull = true;
  meta.sender = sender;
  return meta;
}

ps::KVPairs<float> Pairs(const Keys& keys, const Values& vals = {}) {
  ps::KVPairs<float> kv;
  kv.keys = ps::SArray<ps::Key>(keys);
  if (!vals.empty()) kv.vals = ps::SArray<float>(vals);
  return kv;
}

// Records every response the handle sends.
struct Responses {
  std::vector<std::pair<ps::KVMeta, ps::KVPairs<float>>> sent;
  SyncOptimizerServer::Respond Sink() {
    return [this](const ps::KVMeta& m, const ps::KVPairs<float>& r) { sent.emplace_back(m, r); };
  }
};

Values Pull(SyncOptimizerServer& server, const Keys& keys) {
  Responses r;
  server.Handle(PullMeta(Worker(0)), Pairs(keys), r.Sink());
  EXPECT_EQ(r.sent.size(), 1u);
  return Values(r.sent.at(0).second.vals.begin(), r.sent.at(0).second.vals.end());
}

ModelConfig Lr() { return {.kind = ModelKind::kLogisticRegression, .seed = 3}; }
ModelConfig Fm() {
  return {.kind = ModelKind::kFactorizationMachine, .embedding_dim = 2, .seed = 3};
}

TEST(BspRoundTest, MergesInSenderOrderWhateverTheArrivalOrder) {
  // Float addition is not associative: 1e8 + 1 - 1e8 depends on the order.
  const Keys k{7};
  const Values big{1e8f}, one{1.0f}, minus_big{-1e8f};
  std::vector<float> sums_a, sums_b;
  Keys keys_a, keys_b;
  BspRound a(3, 1), b(3, 1);
  ASSERT_TRUE(a.Add(Worker(0), 1, ps::SArray<ps::Key>(k), ps::SArray<float>(big)));
  ASSERT_TRUE(a.Add(Worker(1), 1, ps::SArray<ps::Key>(k), ps::SArray<float>(one)));
  ASSERT_TRUE(a.Add(Worker(2), 1, ps::SArray<ps::Key>(k), ps::SArray<float>(minus_big)));
  ASSERT_TRUE(b.Add(Worker(2), 1, ps::SArray<ps::Key>(k), ps::SArray<float>(minus_big)));
  ASSERT_TRUE(b.Add(Worker(1), 1, ps::SArray<ps::Key>(k), ps::SArray<float>(one)));
  ASSERT_TRUE(b.Add(Worker(0), 1, ps::SArray<ps::Key>(k), ps::SArray<float>(big)));
  ASSERT_TRUE(a.complete());
  ASSERT_TRUE(b.complete());
  a.Merge(&keys_a, &sums_a);
  b.Merge(&keys_b, &sums_b);
  EXPECT_EQ(keys_a, keys_b);
  EXPECT_EQ(std::memcmp(sums_a.data(), sums_b.data(), sizeof(float)), 0);
  EXPECT_EQ(sums_a[0], (0.0f + 1e8f + 1.0f) + -1e8f);
}

// Up to two ascending pushes are merged by cursors, unsorted ones (and more
// pushes) by a hash table: the same rounds in both forms give the same sums,
// bit for bit, per key (keys ascending from the cursors).
TEST(BspRoundTest, SortedAndUnsortedPushesGiveTheSameSums) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> gradient(-1e4f, 1e4f);
  for (int trial = 0; trial < 40; ++trial) {
    const uint32_t workers = 1 + rng() % 5, length = 1 + rng() % 3;
    BspRound sorted(workers, length), unsorted(workers, length);
    for (uint32_t w = 0; w < workers; ++w) {
      std::map<ps::Key, Values> push;  // ascending, some keys shared between workers
      const size_t count = rng() % 60;
      for (size_t i = 0; i < count; ++i) {
        Values g(length);
        for (float& v : g) v = gradient(rng) * (rng() % 7 == 0 ? 1e-6f : 1.0f);
        push[rng() % 90] = g;
      }
      Keys keys;
      Values vals;
      for (const auto& [key, g] : push) {
        keys.push_back(key);
        vals.insert(vals.end(), g.begin(), g.end());
      }
      // Workers added in a shuffled order: the merge orders them by sender.
      ASSERT_TRUE(sorted.Add(Worker(w), 1, ps::SArray<ps::Key>(keys), ps::SArray<float>(vals)));
      std::vector<size_t> order(keys.size());
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), rng);
      Keys shuffled_keys;
      Values shuffled_vals;
      for (size_t i : order) {
        shuffled_keys.push_back(keys[i]);
        shuffled_vals.insert(shuffled_vals.end(), vals.begin() + i * length,
                             vals.begin() + (i + 1) * length);
      }
      ASSERT_TRUE(unsorted.Add(Worker(w), 1, ps::SArray<ps::Key>(shuffled_keys),
                               ps::SArray<float>(shuffled_vals)));
    }
    Keys keys_sorted, keys_unsorted;
    Values sums_sorted, sums_unsorted;
    sorted.Merge(&keys_sorted, &sums_sorted);
    unsorted.Merge(&keys_unsorted, &sums_unsorted);
    if (workers <= 2) {
      EXPECT_TRUE(std::is_sorted(keys_sorted.begin(), keys_sorted.end()));
    }
    ASSERT_EQ(std::set<ps::Key>(keys_sorted.begin(), keys_sorted.end()).size(), keys_sorted.size());
    std::map<ps::Key, Values> by_key;
    for (size_t i = 0; i < keys_unsorted.size(); ++i) {
      by_key[keys_unsorted[i]].assign(sums_unsorted.begin() + i * length,
                                      sums_unsorted.begin() + (i + 1) * length);
    }
    ASSERT_EQ(by_key.size(), keys_sorted.size()) << trial;
    for (size_t i = 0; i < keys_sorted.size(); ++i) {
      const Values& want = by_key.at(keys_sorted[i]);
      EXPECT_EQ(std::memcmp(want.data(), sums_sorted.data() + i * length, length * sizeof(float)),
                0)
          << "key " << keys_sorted[i] << ", trial " << trial;
    }
  }
}

TEST(BspRoundTest, RefusesASecondPushOfOneSenderAndOvershooting) {
  BspRound round(2, 1);
  const ps::SArray<ps::Key> k(Keys{1});
  const ps::SArray<float> v(Values{1.0f});
  EXPECT_TRUE(round.Add(Worker(0), 1, k, v));
  EXPECT_FALSE(round.Add(Worker(0), 1, k, v));
  EXPECT_FALSE(round.Add(Worker(1), 2, k, v));
  EXPECT_EQ(round.contributions(), 1u);
  EXPECT_TRUE(round.Add(Worker(1), 1, k, v));
  EXPECT_TRUE(round.complete());
  round.Clear();
  EXPECT_EQ(round.contributions(), 0u);
}

TEST(SyncOptimizerServerTest, HoldsPushesUntilEveryWorkerHasPushed) {
  SyncOptimizerServer server(Lr(), {.kind = OptimizerKind::kSgd, .learning_rate = 1.0f}, 2);
  const Keys keys{10, 20};
  const Values before = Pull(server, keys);
  Responses r;
  server.Handle(PushMeta(Worker(0)), Pairs(keys, {1.0f, 2.0f}), r.Sink());
  EXPECT_TRUE(r.sent.empty()) << "answered before the second worker pushed";
  EXPECT_EQ(Pull(server, keys), before) << "a half-done iteration must not be visible";
  server.Handle(PushMeta(Worker(1)), Pairs({20}, {4.0f}), r.Sink());
  ASSERT_EQ(r.sent.size(), 2u);
  const Values after = Pull(server, keys);
  // SGD, lr 1: w -= sum / N with N = 2 for every key (a worker without the
  // key contributed zero).
  EXPECT_FLOAT_EQ(after[0], before[0] - 1.0f / 2);
  EXPECT_FLOAT_EQ(after[1], before[1] - (2.0f + 4.0f) / 2);
  EXPECT_EQ(server.stats().rounds, 1u);
  EXPECT_EQ(server.stats().pushes, 2u);
}

TEST(SyncOptimizerServerTest, AnEmptyPushCountsAsAContribution) {
  SyncOptimizerServer server(Lr(), {.kind = OptimizerKind::kSgd, .learning_rate = 1.0f}, 2);
  Responses r;
  server.Handle(PushMeta(Worker(0)), Pairs({5}, {1.0f}), r.Sink());
  server.Handle(PushMeta(Worker(1)), Pairs({}), r.Sink());
  EXPECT_EQ(r.sent.size(), 2u);
  EXPECT_EQ(server.stats().rounds, 1u);
}

// The final parameters after rounds of pushes given as (sender, num_merged, gradient per key).
struct Push {
  int sender;
  int num_merged;
  Values gradients;
};

uint64_t Train(const ModelConfig& model, const OptimizerConfig& optimizer, uint32_t workers,
               const std::vector<std::vector<Push>>& rounds, const Keys& keys) {
  SyncOptimizerServer server(model, optimizer, workers);
  Responses r;
  for (const auto& round : rounds) {
    for (const Push& p : round) {
      server.Handle(PushMeta(p.sender, p.num_merged), Pairs(keys, p.gradients), r.Sink());
    }
  }
  EXPECT_EQ(server.stats().rounds, rounds.size());
  return server.Fingerprint();
}

class NumMergedTest : public ::testing::TestWithParam<OptimizerKind> {};

TEST_P(NumMergedTest, APushOfTwoWorkersSumEqualsTheirTwoPushes) {
  const OptimizerConfig optimizer{
      .kind = GetParam(), .learning_rate = 0.1f, .l1 = 0.01f, .l2 = 0.01f};
  const Keys keys{3, 9};  // FM: 3 values per key
  const Values g0{0.5f, -0.25f, 0.125f, 1.5f, 0.3f, -0.7f};
  const Values g1{-0.1f, 0.75f, 0.2f, 0.6f, -0.9f, 0.05f};
  const Values g2{0.4f, 0.4f, -0.3f, 0.2f, 0.1f, 0.9f};
  Values g01(g0.size());
  for (size_t i = 0; i < g0.size(); ++i) g01[i] = 0.0f + g0[i] + g1[i];  // as the server adds
  const std::vector<std::vector<Push>> separate{
      {{Worker(0), 1, g0}, {Worker(1), 1, g1}, {Worker(2), 1, g2}},
      {{Worker(2), 1, g1}, {Worker(0), 1, g0}, {Worker(1), 1, g1}}};
  // Workers 0 and 1 arrive as one push (as the switch will deliver hot keys).
  const int switch_id = 1;
  const std::vector<std::vector<Push>> merged{{{switch_id, 2, g01}, {Worker(2), 1, g2}},
                                              {{Worker(2), 1, g1}, {switch_id, 2, g01}}};
  const uint64_t a = Train(Fm(), optimizer, 3, separate, keys);
  const uint64_t b = Train(Fm(), optimizer, 3, merged, keys);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, Train(Fm(), optimizer, 3, {}, keys)) << "the pushes changed nothing";
}

INSTANTIATE_TEST_SUITE_P(AllOptimizers, NumMergedTest,
                         ::testing::Values(OptimizerKind::kSgd, OptimizerKind::kAdagrad,
                                           OptimizerKind::kFtrl),
                         [](const auto& info) { return OptimizerKindName(info.param); });

TEST(SyncOptimizerServerTest, ArrivalOrderDoesNotChangeTheModel) {
  const OptimizerConfig adagrad{.kind = OptimizerKind::kAdagrad, .learning_rate = 0.3f};
  const Keys keys{1, 2};
  const Values a{1e-3f, 7.0f}, b{3.3f, -1e-4f}, c{-3.3f, 2.2f};
  const uint64_t forward =
      Train(Lr(), adagrad, 3, {{{Worker(0), 1, a}, {Worker(1), 1, b}, {Worker(2), 1, c}}}, keys);
  const uint64_t backward =
      Train(Lr(), adagrad, 3, {{{Worker(2), 1, c}, {Worker(1), 1, b}, {Worker(0), 1, a}}}, keys);
  EXPECT_EQ(forward, backward);
}

TEST(SyncOptimizerServerTest, AnEarlyPushWaitsForTheNextRound) {
  SyncOptimizerServer server(Lr(), {.kind = OptimizerKind::kSgd, .learning_rate = 1.0f}, 2);
  const Keys keys{4};
  const float w0 = Pull(server, keys)[0];
  Responses r;
  server.Handle(PushMeta(Worker(0), 1, 1), Pairs(keys, {1.0f}), r.Sink());
  server.Handle(PushMeta(Worker(0), 1, 2), Pairs(keys, {10.0f}), r.Sink());  // next iteration
  EXPECT_EQ(server.stats().deferred_pushes, 1u);
  server.Handle(PushMeta(Worker(1), 1, 1), Pairs(keys, {1.0f}), r.Sink());
  ASSERT_EQ(r.sent.size(), 2u);
  EXPECT_EQ(server.stats().rounds, 1u);
  EXPECT_FLOAT_EQ(Pull(server, keys)[0], w0 - 1.0f);
  server.Handle(PushMeta(Worker(1), 1, 2), Pairs(keys, {2.0f}), r.Sink());
  EXPECT_EQ(r.sent.size(), 4u);
  EXPECT_FLOAT_EQ(Pull(server, keys)[0], w0 - 1.0f - 6.0f);
}

TEST(SyncOptimizerServerTest, AMalformedPushIsCountedAndDoesNotStallTheRound) {
  SyncOptimizerServer server(Lr(), {.kind = OptimizerKind::kSgd, .learning_rate = 1.0f}, 2);
  const Keys keys{4, 5};
  const Values before = Pull(server, keys);
  Responses r;
  server.Handle(PushMeta(Worker(0)), Pairs(keys, {1.0f}), r.Sink());  // one value for two keys
  server.Handle(PushMeta(Worker(1)), Pairs(keys, {2.0f, 2.0f}), r.Sink());
  EXPECT_EQ(r.sent.size(), 2u);
  EXPECT_EQ(server.stats().malformed_pushes, 1u);
  const Values after = Pull(server, keys);
  EXPECT_FLOAT_EQ(after[0], before[0] - 1.0f);
  EXPECT_FLOAT_EQ(after[1], before[1] - 1.0f);
}

TEST(SyncOptimizerServerTest, APushPullIsAnsweredWithTheUpdatedValues) {
  SyncOptimizerServer server(Lr(), {.kind = OptimizerKind::kSgd, .learning_rate = 1.0f}, 1);
  const Keys keys{8};
  const float w0 = Pull(server, keys)[0];
  ps::KVMeta meta = PushMeta(Worker(0));
  meta.pull = true;
  Responses r;
  server.Handle(meta, Pairs(keys, {0.5f}), r.Sink());
  ASSERT_EQ(r.sent.size(), 1u);
  ASSERT_EQ(r.sent[0].second.vals.size(), 1u);
  EXPECT_FLOAT_EQ(r.sent[0].second.vals[0], w0 - 0.5f);
}

// Libra's hot path: the switch delivers an epoch's hot keys as one push of
// all N workers' sums; the cold keys still come as the workers' own pushes.
ps::KVMeta SwitchPushMeta(int num_workers) {
  ps::KVMeta meta = PushMeta(-1, num_workers);
  meta.from_switch = true;
  return meta;
}

// One worker's gradient for one epoch, per key (value_length floats each).
using Gradients = std::map<ps::Key, Values>;

// Pushes `epochs` (per epoch, each worker's gradients) to `server`: the plain
// way when `hot` is empty, else with the keys in `hot` summed in worker-rank
// order as the switch would deliver them (every hot key, zeros where no
// worker pushed it). Returns the responses.
Responses PushEpochs(SyncOptimizerServer& server, const std::vector<std::vector<Gradients>>& epochs,
                     const std::set<ps::Key>& hot) {
  Responses r;
  const uint32_t length = server.value_length();
  for (const auto& workers : epochs) {
    Gradients hot_sums;
    for (ps::Key k : hot) hot_sums[k] = Values(length, 0.0f);
    for (size_t w = 0; w < workers.size(); ++w) {
      Keys keys;
      Values vals;
      for (const auto& [key, g] : workers[w]) {
        if (hot.count(key)) {
          for (uint32_t j = 0; j < length; ++j) hot_sums[key][j] += g[j];
          continue;
        }
        keys.push_back(key);
        vals.insert(vals.end(), g.begin(), g.end());
      }
      server.Handle(PushMeta(Worker(static_cast<int>(w))), Pairs(keys, vals), r.Sink());
    }
    if (hot.empty()) continue;
    Keys keys;
    Values vals;
    for (const auto& [key, sum] : hot_sums) {
      keys.push_back(key);
      vals.insert(vals.end(), sum.begin(), sum.end());
    }
    server.Handle(SwitchPushMeta(static_cast<int>(workers.size())), Pairs(keys, vals), r.Sink());
  }
  return r;
}

// Three workers, two epochs, FM values of length 3; key 11 is hot but no
// worker pushes it, key 5 is cold.
std::vector<std::vector<Gradients>> ThreeWorkersTwoEpochs() {
  return {{{{3, {0.5f, -0.25f, 0.125f}}, {5, {1.5f, 0.3f, -0.7f}}},
           {{3, {-0.1f, 0.75f, 0.2f}}, {9, {0.6f, -0.9f, 0.05f}}},
           {{5, {0.4f, 0.4f, -0.3f}}, {9, {0.2f, 0.1f, 0.9f}}}},
          {{{9, {1e-3f, 7.0f, 2.0f}}}, {{3, {3.3f, -1e-4f, 0.0f}}, {5, {-3.3f, 2.2f, 1.0f}}}, {}}};
}

class SwitchPathTest : public ::testing::TestWithParam<OptimizerKind> {
 protected:
  OptimizerConfig Optimizer() const {
    // L2 makes a step with a zero gradient move the weights, so stepping an
    // untouched hot key would show.
    return {.kind = GetParam(), .learning_rate = 0.1f, .l1 = 0.01f, .l2 = 0.05f};
  }
};

TEST_P(SwitchPathTest, AHotPushOfNWorkersGivesTheSameModelAsTheirOwnPushes) {
  const Keys all{3, 5, 9, 11};
  SyncOptimizerServer plain(Fm(), Optimizer(), 3);
  SyncOptimizerServer libra(Fm(), Optimizer(), 3);
  PushEpochs(plain, ThreeWorkersTwoEpochs(), {});
  const Responses r = PushEpochs(libra, ThreeWorkersTwoEpochs(), {3, 9, 11});
  EXPECT_EQ(r.sent.size(), 2u * (3 + 1)) << "every push answered, the switch's too";
  EXPECT_EQ(Pull(libra, all), Pull(plain, all));
  SyncOptimizerServer untrained(Fm(), Optimizer(), 3);
  EXPECT_NE(Pull(plain, all), Pull(untrained, all)) << "the pushes changed nothing";
  const SyncServerStats s = libra.stats();
  EXPECT_EQ(s.rounds, 2u);
  EXPECT_EQ(s.switch_rounds, 2u);
  EXPECT_EQ(s.switch_keys_updated, 4u);    // 3 and 9 in epoch 1; 3 and 9 in epoch 2
  EXPECT_EQ(s.switch_keys_untouched, 2u);  // 11, twice
  EXPECT_EQ(s.keys_updated, plain.stats().keys_updated);
}

INSTANTIATE_TEST_SUITE_P(AllOptimizers, SwitchPathTest,
                         ::testing::Values(OptimizerKind::kSgd, OptimizerKind::kAdagrad,
                                           OptimizerKind::kFtrl),
                         [](const auto& info) { return OptimizerKindName(info.param); });

TEST(SyncOptimizerServerTest, TheSwitchRoundIsAnsweredAtOnceTheColdRoundWaitsForAllWorkers) {
  SyncOptimizerServer server(Lr(), {.kind = OptimizerKind::kSgd, .learning_rate = 1.0f}, 2);
  const Keys hot{1}, cold{2};
  const float hot0 = Pull(server, hot)[0], cold0 = Pull(server, cold)[0];
  Responses cold_responses, hot_responses;
  server.Handle(PushMeta(Worker(0)), Pairs(cold, {1.0f}), cold_responses.Sink());
  server.Handle(SwitchPushMeta(2), Pairs(hot, {4.0f}), hot_responses.Sink());
  ASSERT_EQ(hot_responses.sent.size(), 1u) << "the switch's push waited for the cold round";
  EXPECT_TRUE(cold_responses.sent.empty());
  EXPECT_FLOAT_EQ(Pull(server, hot)[0], hot0 - 4.0f / 2);
  EXPECT_FLOAT_EQ(Pull(server, cold)[0], cold0) << "a half-done cold round is visible";
  // The next epoch's hot push may come before this epoch's cold round ends.
  server.Handle(SwitchPushMeta(2), Pairs(hot, {2.0f}), hot_responses.Sink());
  EXPECT_EQ(hot_responses.sent.size(), 2u);
  server.Handle(PushMeta(Worker(1)), Pairs({}), cold_responses.Sink());
  EXPECT_EQ(cold_responses.sent.size(), 2u);
  EXPECT_FLOAT_EQ(Pull(server, cold)[0], cold0 - 1.0f / 2);
  EXPECT_FLOAT_EQ(Pull(server, hot)[0], hot0 - 6.0f / 2);
  EXPECT_EQ(server.stats().rounds, 1u);
  EXPECT_EQ(server.stats().switch_rounds, 2u);
  EXPECT_EQ(server.stats().deferred_pushes, 0u);
}

TEST(SyncOptimizerServerTest, TheSwitchPathsPullReadsTheUpdatedHotValues) {
  SyncOptimizerServer server(Lr(), {.kind = OptimizerKind::kSgd, .learning_rate = 1.0f}, 4);
  const Keys hot{7, 8};
  const Values before = Pull(server, hot);
  Responses r;
  server.Handle(SwitchPushMeta(4), Pairs(hot, {8.0f, 0.0f}), r.Sink());
  ps::KVMeta pull = PullMeta(-1);
  pull.from_switch = true;
  server.Handle(pull, Pairs(hot), r.Sink());
  ASSERT_EQ(r.sent.size(), 2u);
  const auto& values = r.sent[1].second.vals;
  ASSERT_EQ(values.size(), 2u);
  EXPECT_FLOAT_EQ(values[0], before[0] - 8.0f / 4);
  EXPECT_EQ(values[1], before[1]) << "an untouched hot key was stepped";
}

// The switch's push asks for its keys' values back. Whether every key was
// stepped (values from the step itself) or one summed to zero and was not
// (values read again), the answer is what a pull reads after the round.
TEST(SyncOptimizerServerTest, ASwitchPushPullIsAnsweredWithItsKeysValuesAfterTheRound) {
  for (const bool one_untouched : {false, true}) {
    SyncOptimizerServer server(Fm(), {.kind = OptimizerKind::kAdagrad, .learning_rate = 0.1f}, 2);
    const Keys hot{4, 9, 13};
    Values sums(hot.size() * server.value_length(), 0.5f);
    if (one_untouched)
      std::fill_n(sums.begin() + server.value_length(), server.value_length(), 0.0f);
    ps::KVMeta meta = SwitchPushMeta(2);
    meta.pull = true;
    Responses r;
    server.Handle(meta, Pairs(hot, sums), r.Sink());
    ASSERT_EQ(r.sent.size(), 1u);
    const auto& answer = r.sent[0].second;
    EXPECT_EQ(Keys(answer.keys.begin(), answer.keys.end()), hot);
    EXPECT_EQ(Values(answer.vals.begin(), answer.vals.end()), Pull(server, hot)) << one_untouched;
    EXPECT_EQ(server.stats().switch_keys_untouched, one_untouched ? 1u : 0u);
  }
}

TEST(SyncOptimizerServerTest, ASwitchPushOfTheWrongWorkerCountIsCountedAndAnswered) {
  SyncOptimizerServer server(Lr(), {.kind = OptimizerKind::kSgd, .learning_rate = 1.0f}, 3);
  const Keys hot{6};
  const float w0 = Pull(server, hot)[0];
  Responses r;
  server.Handle(SwitchPushMeta(2), Pairs(hot, {1.0f}), r.Sink());
  EXPECT_EQ(r.sent.size(), 1u) << "the switch path stalled";
  EXPECT_EQ(server.stats().malformed_pushes, 1u);
  EXPECT_EQ(Pull(server, hot)[0], w0);
  server.Handle(SwitchPushMeta(3), Pairs(hot, {3.0f}), r.Sink());
  EXPECT_EQ(r.sent.size(), 2u);
  EXPECT_FLOAT_EQ(Pull(server, hot)[0], w0 - 1.0f);
}

TEST(EveryServerSliceTest, PushesReachEveryServerPullsOnlyThoseWithKeys) {
  const std::vector<ps::Range> ranges{ps::Range(0, 100), ps::Range(100, 200),
                                      ps::Range(200, ps::kMaxKey)};
  auto broadcast = std::make_shared<bool>(true);
  auto slicer = EveryServerSlicer(broadcast);
  ps::KVPairs<float> send = Pairs({5, 7, 250}, {1, 2, 3, 4, 5, 6});
  ps::KVWorker<float>::SlicedKVs sliced;
  slicer(send, ranges, &sliced);
  ASSERT_EQ(sliced.size(), 3u);
  EXPECT_TRUE(sliced[0].first && sliced[1].first && sliced[2].first);
  EXPECT_EQ(sliced[0].second.keys.size(), 2u);
  EXPECT_EQ(sliced[0].second.vals.size(), 4u);
  EXPECT_TRUE(sliced[1].second.keys.empty());
  ASSERT_EQ(sliced[2].second.keys.size(), 1u);
  EXPECT_EQ(sliced[2].second.vals[1], 6.0f);
  *broadcast = false;
  slicer(Pairs({5, 7, 250}), ranges, &sliced);
  EXPECT_TRUE(sliced[0].first);
  EXPECT_FALSE(sliced[1].first);
  EXPECT_TRUE(sliced[2].first);
}

TEST(JobPlanTest, DealsTrainingRowsRoundRobinAndAgreesOnIterations) {
  const JobPlan plan = JobPlan::Make(1000, 0.1, 4, 30);
  EXPECT_EQ(plan.test_rows, 100u);
  EXPECT_EQ(plan.train_rows, 900u);
  uint64_t sum = 0;
  for (uint32_t w = 0; w < 4; ++w) sum += plan.TrainRowsOfWorker(w);
  EXPECT_EQ(sum, 900u);
  EXPECT_EQ(plan.TrainRowsOfWorker(0), 225u);
  EXPECT_EQ(plan.iterations_per_epoch, 8u);  // ceil(225 / 30)
  const JobPlan odd = JobPlan::Make(10, 0.3, 4, 1);
  EXPECT_EQ(odd.train_rows, 7u);
  EXPECT_EQ(odd.TrainRowsOfWorker(0), 2u);  // rows 0, 4
  EXPECT_EQ(odd.TrainRowsOfWorker(2), 2u);  // rows 2, 6
  EXPECT_EQ(odd.TrainRowsOfWorker(3), 1u);  // row 3
}

}  // namespace
}  // namespace libra::train
