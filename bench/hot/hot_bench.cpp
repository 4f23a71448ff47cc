// Counting must keep up with reading the data (issue target: 20 million key
// occurrences per second per core); placement and packing run once per job
// and once per push respectively.
//
//   bench_hot --benchmark_out=hot.json --benchmark_out_format=json
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "hot/packing.h"
#include "hot/placement.h"
#include "hot/update_counter.h"

namespace libra::hot {
namespace {

// Key occurrences as the default synthetic workload produces them: 26 fields,
// 1M keys in all, Zipf(0.85) popularity within each field, hashed key ids.
const std::vector<Key>& CtrStream() {
  static const std::vector<Key> stream = [] {
    constexpr uint32_t kFields = 26;
    constexpr uint64_t kKeysPerField = 1'000'000 / kFields;
    std::vector<double> cumulative(kKeysPerField);
    double sum = 0;
    for (uint64_t rank = 0; rank < kKeysPerField; ++rank) {
      sum += std::pow(double(rank + 1), -0.85);
      cumulative[rank] = sum;
    }
    std::mt19937_64 random(1);
    std::uniform_real_distribution<double> uniform(0, sum);
    std::vector<Key> keys(8'000'000);
    for (size_t i = 0; i < keys.size(); ++i) {
      const auto rank = static_cast<uint64_t>(
          std::upper_bound(cumulative.begin(), cumulative.end(), uniform(random)) -
          cumulative.begin());
      const uint64_t field = i % kFields;
      keys[i] = (field * kKeysPerField + rank) * 0x9E3779B97F4A7C15ull;
    }
    return keys;
  }();
  return stream;
}

void BM_CountExact(benchmark::State& state) {
  const std::vector<Key>& stream = CtrStream();
  for (auto _ : state) {
    UpdateCounter counter;
    counter.AddAll(stream);
    benchmark::DoNotOptimize(counter.total());
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(stream.size()));
}
BENCHMARK(BM_CountExact)->Unit(benchmark::kMillisecond);

// The same stream into a counter that has already seen its keys: the rate in
// the middle of a long read, once the table has stopped growing.
void BM_CountExactWarm(benchmark::State& state) {
  const std::vector<Key>& stream = CtrStream();
  UpdateCounter counter;
  counter.AddAll(stream);
  for (auto _ : state) {
    counter.AddAll(stream);
    benchmark::DoNotOptimize(counter.total());
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(stream.size()));
}
BENCHMARK(BM_CountExactWarm)->Unit(benchmark::kMillisecond);

// Past the memory budget: Space-Saving with state.range(0) counters.
void BM_CountSketch(benchmark::State& state) {
  const std::vector<Key>& stream = CtrStream();
  const size_t budget = size_t(state.range(0)) * 88;
  for (auto _ : state) {
    UpdateCounter counter(budget);
    counter.AddAll(stream);
    benchmark::DoNotOptimize(counter.error_bound());
    state.counters["error_bound"] = double(counter.error_bound());
    state.counters["exact"] = counter.exact();
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(stream.size()));
}
BENCHMARK(BM_CountSketch)->Arg(100'000)->Arg(300'000)->Unit(benchmark::kMillisecond);

std::vector<HotKey> HotKeys(uint32_t count) {
  std::vector<HotKey> keys;
  for (uint32_t rank = 1; rank <= count; ++rank) {
    keys.push_back({uint64_t{rank} * 0x9E3779B97F4A7C15ull, 1, 1'000'000 / rank + 1});
  }
  return keys;
}

void BM_Place(benchmark::State& state) {
  // 1M keys, as many as the default workload has, on a switch that holds them all.
  const SwitchLayout layout{32, 32768, 2};
  const std::vector<HotKey> keys = HotKeys(1 << 20);
  const auto placement = MakePlacement(static_cast<PlacementKind>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(placement->Place(keys, layout));
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(keys.size()));
  state.SetLabel(std::string(PlacementName(placement->kind())));
}
BENCHMARK(BM_Place)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

// One worker's push of 20,000 hot values through a reused packer.
void BM_LayoutAwarePack(benchmark::State& state) {
  const HotSet set = PlaceHotSet(HotKeys(100'000), SwitchLayout{}, HeatPlacement());
  std::vector<CellAddress> push;
  std::mt19937_64 random(2);
  for (int i = 0; i < 20'000; ++i) push.push_back(set.cells()[random() % set.num_values()]);
  LayoutAwarePacker packer(SwitchLayout{}.num_arrays);
  std::vector<SlotValue> packet(packer.num_arrays());
  for (auto _ : state) {
    for (const CellAddress& cell : push) packer.Push(cell, 1.0f);
    while (packer.NextPacket(packet)) benchmark::DoNotOptimize(packet.data());
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(push.size()));
  state.counters["utilisation"] = packer.stats().utilisation();
}
BENCHMARK(BM_LayoutAwarePack)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace libra::hot

BENCHMARK_MAIN();
