#include "bench/program_benchmark.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <ctime>
#include <random>
#include <stdexcept>
#include <vector>

#include "dataplane/program.h"

namespace libra::dataplane {
namespace {

double ThreadCpuSeconds() {
  timespec now{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

}  // namespace

BenchTraffic MakeRowTraffic(const ProgramBenchmarkOptions& options) {
  BenchTraffic traffic;
  traffic.workers = options.workers;
  traffic.slots_per_packet = options.slots_per_packet;
  traffic.cells_per_array = options.cells_per_array;
  traffic.scale_bits = options.scale_bits;
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
  std::vector<BenchPacket>& packets = traffic.epochs.emplace_back();
  std::array<wire::Slot, wire::kMaxSlots> slots{};
  for (std::uint32_t seq = 0; seq < packets_per_worker; ++seq) {
    for (int w = 0; w < options.workers; ++w) {
      wire::Header header;
      header.type = wire::MessageType::kData;
      header.job_id = traffic.job_id;
      header.node_id = static_cast<std::uint16_t>(w);
      header.seq = seq;
      header.slot_count = static_cast<std::uint16_t>(options.slots_per_packet);
      for (int j = 0; j < options.slots_per_packet; ++j) {
        slots[j] = {true, false, row_of_packet[j][seq], std::bit_cast<std::uint32_t>(value(rng))};
      }
      BenchPacket& packet = packets.emplace_back();
      packet.bytes.resize(wire::EncodedSize(header.slot_count));
      packet.worker = static_cast<std::uint16_t>(w);
      wire::Encode(header, slots, packet.bytes);
    }
  }
  return traffic;
}

ProgramBenchmarkResult RunProgramBenchmark(const BenchTraffic& traffic, double seconds,
                                           const PipelineProfile& profile) {
  SwitchJob job;
  job.job_id = traffic.job_id;
  job.token = "bench";
  for (int w = 0; w < traffic.workers; ++w) {
    job.workers.push_back({0x0a000001u + static_cast<std::uint32_t>(w), 4000});
  }
  job.servers.push_back({0x0a000100u, 5000});
  job.cells_per_array = traffic.cells_per_array;
  job.scale_bits = traffic.scale_bits;
  job.slots_per_packet = traffic.slots_per_packet;
  Program program(profile);
  const InstallResult installed = program.InstallJob(job);
  if (!installed.ok) throw std::invalid_argument(installed.error);
  if (traffic.epochs.empty()) throw std::invalid_argument("benchmark traffic has no epochs");

  // Each epoch's packets back to back in one buffer, as a receive ring holds
  // them (a packet per heap block would add cache misses switchd does not
  // have); the epoch fields are patched there round by round.
  struct EpochBytes {
    std::vector<std::uint8_t> bytes;
    std::vector<std::size_t> begin;  // packet k is bytes[begin[k], begin[k + 1])
    std::vector<std::uint16_t> worker;
  };
  std::vector<EpochBytes> epochs(traffic.epochs.size());
  for (std::size_t e = 0; e < epochs.size(); ++e) {
    for (const BenchPacket& packet : traffic.epochs[e]) {
      if (packet.worker >= job.workers.size() || packet.bytes.size() < wire::kHeaderBytes) {
        throw std::invalid_argument(
            "benchmark traffic: a packet too short or from a worker the job does not have");
      }
      epochs[e].begin.push_back(epochs[e].bytes.size());
      epochs[e].bytes.insert(epochs[e].bytes.end(), packet.bytes.begin(), packet.bytes.end());
      epochs[e].worker.push_back(packet.worker);
    }
    epochs[e].begin.push_back(epochs[e].bytes.size());
  }

  OutputBatch out;
  ProgramBenchmarkResult result;
  const double cpu_start = ThreadCpuSeconds();
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration<double>(seconds);
  for (std::uint32_t epoch = 0;; ++epoch) {
    EpochBytes& packets = epochs[epoch % epochs.size()];
    const std::size_t count = packets.worker.size();
    std::uint8_t* const bytes = packets.bytes.data();
    for (std::size_t k = 0; k < count; ++k) wire::SetEpoch(bytes + packets.begin[k], epoch);
    for (std::size_t k = 0; k < count; ++k) {
      program.Process({bytes + packets.begin[k], packets.begin[k + 1] - packets.begin[k]},
                      job.workers[packets.worker[k]], out);
      if (out.size() >= 64) out.Clear();
    }
    result.packets += count;
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
