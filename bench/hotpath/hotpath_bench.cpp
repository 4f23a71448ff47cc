// What a worker spends on the CPU per hot push (checking and packing the
// values into DATA packets, and the term of the check of the switch's sums)
// and per REPLICA packet (its MAC checked, its values applied), and a
// server per epoch it publishes (its UPDATE packed by row) and per UPDATE it
// signs, on a Tofino-1 sized layout: 32 arrays, heat placement, a push that
// carries 2/3 of the hot keys.
// And the choice of a hot set: a worker's sampling phase (counting its
// pushes' keys, taking and encoding them for its JOIN), and the
// controller's part, which every worker may wait for at the first hot
// epoch: summing the JOINs, ranking the keys and pricing the candidate sets.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <memory>
#include <random>

#include "hot/cost_model.h"
#include "hot/placement.h"
#include "hot/sampled_rates.h"
#include "hotpath/controller/sampled_sums.h"
#include "hotpath/messages/hot_packets.h"
#include "hotpath/messages/sum_check.h"
#include "hotpath/messages/update_auth.h"
#include "hotpath/server/switch_sum_check.h"
#include "hotpath/worker/hot_replica.h"
#include "hotpath/worker/hot_split.h"
#include "hotpath/worker/key_sampler.h"

namespace libra::hotpath {
namespace {

constexpr std::uint32_t kArrays = 32;

hot::HotSet MakeHotSet(std::uint32_t num_keys, std::uint32_t cells_per_array = 4096) {
  std::vector<hot::HotKey> keys;
  for (std::uint32_t k = 0; k < num_keys; ++k) keys.push_back({k * 13 + 1, 1, num_keys - k});
  return hot::PlaceHotSet(keys, hot::SwitchLayout{kArrays, cells_per_array, 2},
                          hot::HeatPlacement());
}

// `percent` percent of the keys of a `num_keys` set on the Tofino-1 layout
// (12,288 cells an array), in key order, one value each, checked as a push
// or an update is.
struct HotSubset {
  std::shared_ptr<const hot::HotSet> set;
  std::vector<hot::Key> keys;
  std::vector<float> vals;
  std::vector<hot::HotSet::Entry> entries;
  std::vector<std::uint32_t> first_value;
};
HotSubset MakeHotSubset(std::uint32_t num_keys, std::int64_t percent, std::uint64_t seed) {
  HotSubset out;
  out.set = std::make_shared<const hot::HotSet>(MakeHotSet(num_keys, 12288));
  std::mt19937_64 rng(seed);
  for (const hot::HotKey& key : out.set->keys()) {  // heat order is key order here
    if (static_cast<std::int64_t>(rng() % 100) >= percent) continue;
    out.keys.push_back(key.key);
    out.vals.push_back(0.001f * static_cast<float>(rng() % 1000));
  }
  out.first_value = CheckHotValues(*out.set, out.keys, out.vals, {}, &out.entries);
  return out;
}

void BM_PackPush(benchmark::State& state) {
  const hot::HotSet set = MakeHotSet(static_cast<std::uint32_t>(state.range(0)));
  std::mt19937_64 rng(1);
  std::vector<hot::Key> keys;
  std::vector<float> vals;
  for (const hot::HotKey& key : set.keys()) {
    if (rng() % 3 == 0) continue;
    keys.push_back(key.key);
    vals.push_back(0.001f * static_cast<float>(rng() % 1000));
  }
  wire::Header header;
  header.type = wire::MessageType::kData;
  std::size_t packets = 0;
  for (auto _ : state) {
    const auto first_value = CheckHotValues(set, keys, vals, {});
    const PackedValues packed = PackHotValues(set, header, keys, first_value, vals);
    packets = packed.packets.size();
    benchmark::DoNotOptimize(packed.packets.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(vals.size()));
  state.counters["packets"] = static_cast<double>(packets);
  state.counters["utilisation"] =
      static_cast<double>(vals.size()) / static_cast<double>(packets * kArrays);
}
BENCHMARK(BM_PackPush)->Arg(3000)->Arg(30000);

// A worker's sender queueing one push by row (RowOrderQueuer, as every hot
// push is queued before it is packed): `range(1)` percent of a 30,000-key
// set on the Tofino-1 layout (12,288 cells an array), in key order.
void BM_QueuePushByRow(benchmark::State& state) {
  const HotSubset push =
      MakeHotSubset(static_cast<std::uint32_t>(state.range(0)), state.range(1), 5);
  RowOrderQueuer queuer(push.set);
  for (auto _ : state) {
    const CellQueues& queued = queuer.Queue(push.keys, push.entries, push.first_value);
    benchmark::DoNotOptimize(queued.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(push.vals.size()));
}
BENCHMARK(BM_QueuePushByRow)->Args({30000, 10})->Args({30000, 67});

// A server's UPDATE of one epoch, packed by row (PackUpdate): `range(1)`
// percent of a 30,000-key set on the Tofino-1 layout (12,288 cells an
// array) changed, in key order as the server applies them. LR with two
// workers and batches of 200 writes about a tenth of its 30,000 keys an
// epoch.
void BM_PackUpdate(benchmark::State& state) {
  const HotSubset update =
      MakeHotSubset(static_cast<std::uint32_t>(state.range(0)), state.range(1), 3);
  wire::Header header;
  header.type = wire::MessageType::kUpdate;
  std::size_t packets = 0;
  for (auto _ : state) {
    const std::vector<EncodedPacket> packed = PackUpdate(
        *update.set, header, update.keys, update.first_value, update.vals, update.entries);
    packets = packed.size();
    benchmark::DoNotOptimize(packed.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(update.vals.size()));
  state.counters["packets"] = static_cast<double>(packets);
}
BENCHMARK(BM_PackUpdate)->Args({30000, 10})->Args({30000, 67});

// A worker's term of the sum check (sum_check.h) for the same push as
// BM_PackPush: what WRITTEN_KEYS adds to a push, to compare with packing it.
// A server's check of the collected sums costs the same per value.
void BM_SumCheckTerm(benchmark::State& state) {
  const SumCheck check(UpdateKey{}, 16);
  std::mt19937_64 rng(1);
  std::vector<hot::Key> keys;
  std::vector<int> lens;
  std::vector<float> vals;
  for (std::int64_t k = 0; k < state.range(0); ++k) {
    if (rng() % 3 == 0) continue;
    keys.push_back(static_cast<hot::Key>(k * 13 + 1));
    lens.push_back(1);
    vals.push_back(0.001f * static_cast<float>(rng() % 1000));
  }
  for (auto _ : state) benchmark::DoNotOptimize(check.TermOf(7, keys, lens, vals));
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(vals.size()));
}
BENCHMARK(BM_SumCheckTerm)->Arg(3000)->Arg(30000);

// A server's check of one collected epoch (switch_sum_check.h) before it
// applies it: which keys need the workers' values (the saturated ones:
// none here), then the terms of the switch's fixed-point sums against the
// workers'. The epoch of the same push as BM_SumCheckTerm, one worker.
void BM_ServerChecksSums(benchmark::State& state) {
  const auto set =
      std::make_shared<const hot::HotSet>(MakeHotSet(static_cast<std::uint32_t>(state.range(0))));
  const SumCheck check(UpdateKey{}, 16);
  const dataplane::FixedPointCodec codec(16);
  std::mt19937_64 rng(1);
  constexpr std::uint32_t kEpoch = 7;
  CollectedEpoch epoch;
  epoch.epoch = kEpoch;
  epoch.from_switch = true;
  for (const hot::HotKey& key : set->keys()) {
    if (rng() % 3 == 0) continue;
    const std::int32_t fixed = check.AddedValue(0.001f * static_cast<float>(rng() % 1000));
    epoch.keys.push_back(key.key);
    epoch.lens.push_back(1);
    epoch.fixed.push_back(fixed);
    epoch.vals.push_back(std::bit_cast<float>(codec.ToFloatBits(fixed)));
  }
  SwitchSumCheck checker(set, 1, UpdateKey{}, 16);
  checker.AddTerm(kEpoch, 0, check.TermOf(kEpoch, epoch.keys, epoch.lens, epoch.vals));
  for (auto _ : state) {
    const std::vector<hot::Key> from_values = checker.KeysToSumFromValues(epoch);
    if (!checker.Check(&epoch, from_values, {})) state.SkipWithError("the check disagreed");
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(epoch.vals.size()));
}
BENCHMARK(BM_ServerChecksSums)->Arg(3000)->Arg(30000);

// A worker's split of one push into its hot and cold keys (hot_split.h):
// a push of 8,000 keys (an LR batch of 200 rows) of which a share is hot,
// against a hot set of 30,000 keys.
ps::WorkerHotPath::Parts PushOfHalfHotKeys() {
  std::mt19937_64 rng(3);
  std::vector<hot::Key> keys;
  for (int i = 0; i < 8000; ++i) {
    // Hot keys are k * 13 + 1; others fall between them.
    keys.push_back(rng() % 2 == 0 ? (rng() % 30000) * 13 + 1 : rng() % 400000 * 13 + 5);
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  ps::WorkerHotPath::Parts push;
  for (hot::Key key : keys) {
    push.keys.push_back(key);
    push.vals.push_back(0.5f);
  }
  return push;
}

void BM_SplitHotAndCold(benchmark::State& state) {
  const hot::HotSet set = MakeHotSet(30000);
  const ps::WorkerHotPath::Parts push = PushOfHalfHotKeys();
  for (auto _ : state) {
    ps::WorkerHotPath::Parts hot, cold;
    SplitHotAndCold(set, push, &hot, &cold);
    benchmark::DoNotOptimize(hot.keys.data());
    benchmark::DoNotOptimize(cold.keys.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(push.keys.size()));
}
BENCHMARK(BM_SplitHotAndCold);

// The same push when it carries the keys just pulled: the pull's lookups
// are compared and reused (PulledKeys) rather than made again. In this loop
// the hot set stays in the cache; in a job, where the two cores also run
// the server and switchd, each lookup is more often a miss.
void BM_SplitHotAndColdByPulledKeys(benchmark::State& state) {
  const hot::HotSet set = MakeHotSet(30000);
  const ps::WorkerHotPath::Parts push = PushOfHalfHotKeys();
  const std::span<const hot::Key> keys(push.keys.data(), push.keys.size());
  PulledKeys pulled;
  pulled.Classify(set, keys);
  for (auto _ : state) {
    ps::WorkerHotPath::Parts hot, cold;
    std::vector<hot::HotSet::Entry> hot_entries;
    SplitHotAndCold(*pulled.EntriesOf(set, keys), push, &hot, &cold, &hot_entries);
    benchmark::DoNotOptimize(hot.keys.data());
    benchmark::DoNotOptimize(cold.keys.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(push.keys.size()));
}
BENCHMARK(BM_SplitHotAndColdByPulledKeys);

void BM_ReplicaApply(benchmark::State& state) {
  const hot::HotSet set = MakeHotSet(30000);
  HotReplica replica(set);
  std::vector<wire::CellValue> cells(kArrays);
  for (std::uint32_t j = 0; j < kArrays; ++j) cells[j] = {j, j % 64, 0x3f800000u};
  // Streams of 100 packets, the last flagged LAST, epoch after epoch.
  wire::Header header;
  header.type = wire::MessageType::kReplica;
  for (auto _ : state) {
    header.flags = header.seq == 99 ? wire::kFlagLast : 0;
    benchmark::DoNotOptimize(replica.Apply(header, cells));
    if (++header.seq == 100) {
      header.seq = 0;
      ++header.epoch;
    }
  }
  state.SetItemsProcessed(state.iterations() * kArrays);
}
BENCHMARK(BM_ReplicaApply);

// A full UPDATE (532 bytes: 116 values in four rows of the 32 arrays),
// signed by its server and checked by each worker.
std::vector<std::uint8_t> FullUpdate(const UpdateKey& key) {
  std::vector<wire::CellValue> cells;
  for (std::uint32_t i = 0; i < 128; ++i) cells.push_back({i % kArrays, i / kArrays, i});
  cells.resize(wire::UpdateCellsThatFit(cells));
  wire::Header header;
  header.type = wire::MessageType::kUpdate;
  std::vector<std::uint8_t> bytes(wire::UpdateSize(cells));
  wire::EncodeUpdate(header, cells, bytes);
  SignUpdate(key, bytes);
  return bytes;
}

void BM_SignUpdate(benchmark::State& state) {
  const UpdateKey key = NewUpdateKey();
  std::vector<std::uint8_t> bytes = FullUpdate(key);
  for (auto _ : state) {
    SignUpdate(key, bytes);
    benchmark::DoNotOptimize(bytes.data());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes.size()));
  state.counters["bytes"] = static_cast<double>(bytes.size());
}
BENCHMARK(BM_SignUpdate);

void BM_VerifyReplica(benchmark::State& state) {
  const UpdateKey key = NewUpdateKey();
  std::vector<std::uint8_t> bytes = FullUpdate(key);
  wire::SetType(bytes.data(), wire::MessageType::kReplica);
  for (auto _ : state) benchmark::DoNotOptimize(VerifyUpdate(key, bytes));
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes.size()));
}
BENCHMARK(BM_VerifyReplica);

// Four workers' JOINs as a job of LR, batch 1000, 4 workers counts them in
// 3 epochs: 78,000 pushes of hashed keys each (26 fields a row), Zipf 0.85
// over 1,000,000 keys, so each JOIN names ~50,000 keys.
std::vector<std::vector<KeyCount>> SampleJoins() {
  constexpr int kKeys = 1'000'000;
  std::vector<double> cdf(kKeys);
  double sum = 0;
  for (int k = 0; k < kKeys; ++k) cdf[k] = sum += std::pow(k + 1.0, -0.85);
  std::mt19937_64 rng(5);
  std::vector<std::vector<KeyCount>> joins(4);
  for (std::uint32_t w = 0; w < joins.size(); ++w) {
    std::map<std::uint64_t, std::uint64_t> counts;
    for (int i = 0; i < 78'000; ++i) {
      const double u = std::uniform_real_distribution<double>(0, sum)(rng);
      const auto rank = std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin();
      ++counts[(static_cast<std::uint64_t>(rank) + 1) * 0x9E3779B97F4A7C15ull];
    }
    for (const auto& [key, updates] : counts) {
      joins[w].push_back({key, 1, updates, static_cast<std::uint32_t>(key % 2)});
    }
  }
  return joins;
}

// `pushes` pushes of `keys_per_push` distinct hashed keys each (ascending,
// as PS-lite pushes are), Zipf 0.85 over 1,000,000 keys: LR batch 1000
// counts 3 pushes of ~20,000 keys, batch 200 23 pushes of ~4,000.
std::vector<ps::WorkerHotPath::Parts> SamplePushes(int pushes, int keys_per_push) {
  constexpr int kKeys = 1'000'000;
  std::vector<double> cdf(kKeys);
  double sum = 0;
  for (int k = 0; k < kKeys; ++k) cdf[k] = sum += std::pow(k + 1.0, -0.85);
  std::mt19937_64 rng(7);
  std::vector<ps::WorkerHotPath::Parts> out(pushes);
  for (auto& push : out) {
    std::vector<std::uint64_t> keys;
    while (keys.size() < static_cast<std::size_t>(keys_per_push)) {
      const double u = std::uniform_real_distribution<double>(0, sum)(rng);
      const auto rank = std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin();
      keys.push_back((static_cast<std::uint64_t>(rank) + 1) * 0x9E3779B97F4A7C15ull);
      if (keys.size() == static_cast<std::size_t>(keys_per_push)) {
        std::sort(keys.begin(), keys.end());
        keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
      }
    }
    for (std::uint64_t k : keys) {
      push.keys.push_back(k);
      push.vals.push_back(0.5f);
    }
  }
  return out;
}

// A worker's sampling phase: counting its pushes, then taking the counts
// in key order and encoding its JOIN (the JOIN's thread).
void BM_WorkerSamplesAndJoins(benchmark::State& state) {
  const std::vector<ps::WorkerHotPath::Parts> pushes =
      SamplePushes(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  std::size_t keys = 0;
  for (auto _ : state) {
    KeySampler sampler;
    for (const auto& push : pushes) sampler.Count(push);
    JoinRequest join;
    join.counts = sampler.TakeHeaviest(1 << 20);
    keys = join.counts.size();
    benchmark::DoNotOptimize(Encode(join).size());
  }
  state.counters["keys"] = static_cast<double>(keys);
}
BENCHMARK(BM_WorkerSamplesAndJoins)
    ->Args({3, 20000})
    ->Args({23, 4000})
    ->Unit(benchmark::kMillisecond);

void BM_ControllerSumsJoins(benchmark::State& state) {
  const std::vector<std::vector<KeyCount>> joins = SampleJoins();
  std::vector<const std::vector<KeyCount>*> lists;
  for (const auto& join : joins) lists.push_back(&join);
  std::size_t keys = 0;
  for (auto _ : state) {
    const SampledSums sums = SumSampledCounts(lists);
    keys = sums.keys.size();
    benchmark::DoNotOptimize(sums.keys.data());
  }
  state.counters["join_keys"] = static_cast<double>(joins.front().size());
  state.counters["keys"] = static_cast<double>(keys);
}
BENCHMARK(BM_ControllerSumsJoins)->Unit(benchmark::kMillisecond);

// Ranking the summed keys, their expected counts and the cost model's
// candidate sets (as Controller::ChooseFromSamples does; 65,536 cells).
void BM_ControllerPricesSets(benchmark::State& state) {
  const std::vector<std::vector<KeyCount>> joins = SampleJoins();
  std::vector<const std::vector<KeyCount>*> lists;
  for (const auto& join : joins) lists.push_back(&join);
  const SampledSums sums = SumSampledCounts(lists);
  for (auto _ : state) {
    const std::vector<std::uint32_t> order = RankHeaviestFirst(sums.keys);
    std::vector<std::uint64_t> counts;
    counts.reserve(sums.keys.size());
    for (const hot::HotKey& k : sums.keys) counts.push_back(k.frequency);
    const std::vector<double> expected = hot::GoodTuringCounts(counts);
    hot::CostInput input;
    input.num_workers = 4;
    input.num_servers = 2;
    input.capacity_values = 65536;
    input.shared_cores = 2;
    for (std::size_t i = 0; i < order.size() && i < 65536; ++i) {
      const hot::HotKey& k = sums.keys[order[i]];
      input.keys.push_back({k.key, k.value_len, expected[order[i]] / 3});
    }
    benchmark::DoNotOptimize(hot::ChooseByCost(input).chosen.keys);
  }
  state.counters["keys"] = static_cast<double>(sums.keys.size());
}
BENCHMARK(BM_ControllerPricesSets)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace libra::hotpath

BENCHMARK_MAIN();
