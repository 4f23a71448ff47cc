#include "program_benchmark.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <ctime>
#include <random>
#include <stdexcept>
#include <vector>

#include "program.h"

namespace libra::dataplane {
namespace {

double ThreadCpuSeconds() {
  timespec now{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

}  // namespace

ProgramBenchmarkResult RunProgramBenchmark(const ProgramBenchmarkOptions& options,
                                           const PipelineProfile& profile) {
  SwitchJob job;
  job.job_id = 1;
  job.token = "bench";
  for (int w = 0; w < options.workers; ++w) {
    job.workers.push_back({0x0a000001u + static_cast<std::uint32_t>(w), 4000});
  }
  job.servers.push_back({0x0a000100u, 5000});
  job.cells_per_array = options.cells_per_array;
  job.scale_bits = options.scale_bits;
  job.slots_per_packet = options.slots_per_packet;
  Program program(profile);
  const InstallResult installed = program.InstallJob(job);
  if (!installed.ok) throw std::invalid_argument(installed.error);

  // One round: every worker sends packets_per_worker packets of one epoch;
  // the next round is the next epoch (its epoch field patched in place).
  // Packet k of every worker carries the same cells (row k of every array,
  // or the k-th row of each array's shuffle), so all workers add into them.
  const std::uint32_t packets_per_worker =
      std::min(options.packets_per_worker, options.cells_per_array);
  std::mt19937_64 rng(1);
  std::vector<std::vector<std::uint32_t>> row_of_packet(options.slots_per_packet);
  for (auto& rows : row_of_packet) {
    rows.resize(packets_per_worker);
    for (std::uint32_t k = 0; k < packets_per_worker; ++k) rows[k] = k;
    if (options.scattered_rows) std::shuffle(rows.begin(), rows.end(), rng);
  }
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<std::vector<std::uint8_t>> packets;
  std::vector<std::size_t> senders;
  std::array<wire::Slot, wire::kMaxSlots> slots{};
  for (std::uint32_t seq = 0; seq < packets_per_worker; ++seq) {
    for (int w = 0; w < options.workers; ++w) {
      wire::Header header;
      header.type = wire::MessageType::kData;
      header.job_id = job.job_id;
      header.node_id = static_cast<std::uint16_t>(w);
      header.seq = seq;
      header.slot_count = static_cast<std::uint16_t>(options.slots_per_packet);
      for (int j = 0; j < options.slots_per_packet; ++j) {
        slots[j] = {true, false, row_of_packet[j][seq], std::bit_cast<std::uint32_t>(value(rng))};
      }
      packets.emplace_back(wire::EncodedSize(header.slot_count));
      wire::Encode(header, slots, packets.back());
      senders.push_back(static_cast<std::size_t>(w));
    }
  }

  OutputBatch out;
  ProgramBenchmarkResult result;
  const double cpu_start = ThreadCpuSeconds();
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration<double>(options.seconds);
  for (std::uint32_t epoch = 0;; ++epoch) {
    for (auto& bytes : packets) wire::StoreBig32(bytes.data() + 12, epoch);
    for (std::size_t i = 0; i < packets.size(); ++i) {
      program.Process(packets[i], job.workers[senders[i]], out);
      if (out.size() >= 64) out.Clear();
    }
    result.packets += packets.size();
    if (std::chrono::steady_clock::now() >= deadline) break;
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.cpu_seconds = ThreadCpuSeconds() - cpu_start;
  result.values = program.counters()[Event::kValuesAggregated];
  result.one_row_packets = program.counters()[Event::kDataOneRow];
  if (program.counters()[Event::kDataDuplicates] != 0 || program.counters().TotalDrops() != 0) {
    throw std::logic_error("benchmark packets were dropped or seen as duplicates");
  }
  result.packets_per_second = static_cast<double>(result.packets) / result.seconds;
  result.values_per_second = static_cast<double>(result.values) / result.seconds;
  result.packets_per_cpu_second = static_cast<double>(result.packets) / result.cpu_seconds;
  result.register_share = installed.fit.register_share();
  result.register_bits_used = installed.fit.register_bits_used;
  result.register_bits_budget = installed.fit.register_bits_budget;
  return result;
}

}  // namespace libra::dataplane
