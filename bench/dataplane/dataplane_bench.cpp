// Microbenchmarks of the switch program's per-value and per-packet costs.
//
//   bench_dataplane --benchmark_filter=ToFixed
//
// items_per_second is values per second for the conversions and packets per
// second for the program passes.
#include <benchmark/benchmark.h>

#include <bit>
#include <cstdint>
#include <random>
#include <vector>

#include "dataplane/program.h"
#include "wire/fixed_point.h"
#include "wire/wire.h"

namespace libra::dataplane {
namespace {

constexpr int kScaleBits = 16;

std::vector<std::uint32_t> RandomFloatBits(std::size_t n) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> value(-4.0f, 4.0f);
  std::vector<std::uint32_t> bits(n);
  for (auto& b : bits) b = std::bit_cast<std::uint32_t>(value(rng));
  return bits;
}

void BM_ToFixed(benchmark::State& state) {
  const FixedPointCodec codec(kScaleBits);
  const std::vector<std::uint32_t> input = RandomFloatBits(4096);
  for (auto _ : state) {
    for (const std::uint32_t bits : input) benchmark::DoNotOptimize(codec.ToFixed(bits));
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * input.size()));
}
BENCHMARK(BM_ToFixed);

void BM_ToFloatBits(benchmark::State& state) {
  const FixedPointCodec codec(kScaleBits);
  std::vector<std::int32_t> input;
  for (const std::uint32_t bits : RandomFloatBits(4096)) input.push_back(codec.ToFixed(bits).value);
  for (auto _ : state) {
    for (const std::int32_t fixed : input) benchmark::DoNotOptimize(codec.ToFloatBits(fixed));
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * input.size()));
}
BENCHMARK(BM_ToFloatBits);

// DATA packets of one epoch from kWorkers workers, interleaved, all new, each
// ACKed: the first packet of an epoch to reach a cell replaces it, the others
// add. The epoch advances every round so no packet is ever a duplicate.
void BM_ProgramDataPacket(benchmark::State& state) {
  const auto slots_per_packet = static_cast<int>(state.range(0));
  constexpr std::uint32_t kPackets = 1024;
  constexpr int kWorkers = 8;
  SwitchJob job;
  job.job_id = 1;
  job.token = "bench";
  for (int w = 0; w < kWorkers; ++w) {
    job.workers.push_back({0x0a000001u + static_cast<std::uint32_t>(w), 4000});
  }
  job.servers.push_back({0x0a000100u, 5000});
  job.cells_per_array = kPackets;
  job.scale_bits = kScaleBits;
  job.slots_per_packet = slots_per_packet;
  Program program;
  if (!program.InstallJob(job).ok) {
    state.SkipWithError("job does not fit");
    return;
  }
  const std::vector<std::uint32_t> values = RandomFloatBits(kPackets * slots_per_packet);
  std::vector<std::vector<std::uint8_t>> packets;
  std::array<wire::Slot, wire::kMaxSlots> slots{};
  for (std::uint32_t k = 0; k < kPackets; ++k) {
    const std::uint32_t seq = k / kWorkers;
    wire::Header header;
    header.type = wire::MessageType::kData;
    header.job_id = job.job_id;
    header.node_id = static_cast<std::uint16_t>(k % kWorkers);
    header.seq = seq;
    header.slot_count = static_cast<std::uint16_t>(slots_per_packet);
    for (int j = 0; j < slots_per_packet; ++j) {
      slots[j] = {true, false, seq, values[k * slots_per_packet + j]};
    }
    packets.emplace_back(wire::EncodedSize(header.slot_count));
    wire::Encode(header, slots, packets.back());
  }
  OutputBatch out;
  std::uint32_t epoch = 0;
  std::size_t next = 0;
  for (auto _ : state) {
    if (next == packets.size()) {
      state.PauseTiming();
      ++epoch;
      for (auto& bytes : packets) wire::SetEpoch(bytes.data(), epoch);
      next = 0;
      state.ResumeTiming();
    }
    program.Process(packets[next], job.workers[next % kWorkers], out);
    ++next;
    if (out.size() >= 64) out.Clear();
  }
  if (program.counters().TotalDrops() != 0 || program.counters()[Event::kDataDuplicates] != 0) {
    state.SkipWithError("packets were dropped or seen as duplicates");
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
  state.counters["values/s"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * slots_per_packet, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ProgramDataPacket)->Arg(8)->Arg(32);

}  // namespace
}  // namespace libra::dataplane

BENCHMARK_MAIN();
