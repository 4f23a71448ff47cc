// Throughput of the switch program alone, in one thread: DATA packets from
// several workers, every one new (no duplicates), each answered with an ACK.
//
// The packets (the traffic) are made once, before the clock starts, then
// replayed epoch after epoch, their epoch field patched in place. Two kinds
// of traffic are made here (MakeRowTraffic); DATA packets of sparse pushes
// as workers pack them are made by hotpath/push_traffic.h.
#pragma once

#include <cstdint>
#include <vector>

#include "wire/pipeline_profile.h"

namespace libra::dataplane {

struct BenchPacket {
  std::vector<std::uint8_t> bytes;  // an encoded DATA message
  std::uint16_t worker = 0;         // its sender, an index into the job's workers
};

// The DATA packets the switch receives, in arrival order, for one job of
// `workers` workers. Round r of the benchmark is epoch r and replays
// epochs[r % epochs.size()]; each worker's seqs must rise within an epoch.
struct BenchTraffic {
  std::uint32_t job_id = 1;
  int workers = 8;
  int slots_per_packet = 32;
  std::uint32_t cells_per_array = 8192;
  int scale_bits = 16;
  std::vector<std::vector<BenchPacket>> epochs;
};

struct ProgramBenchmarkOptions {
  int workers = 8;
  int slots_per_packet = 32;
  std::uint32_t cells_per_array = 8192;
  std::uint32_t packets_per_worker = 1024;  // per epoch
  // false: packet k carries row k of every array (how a packer fills packets
  // when every array's queue holds the same rows); true: slot j of packet k
  // carries a row drawn from a shuffle of array j's rows, so a packet's
  // cells lie in P different rows.
  bool scattered_rows = false;
  int scale_bits = 16;
};

// One epoch in which every worker sends packets_per_worker full packets, and
// packet k of every worker carries the same cells.
BenchTraffic MakeRowTraffic(const ProgramBenchmarkOptions& options);

struct ProgramBenchmarkResult {
  std::uint64_t packets = 0;
  std::uint64_t values = 0;
  std::uint64_t one_row_packets = 0;  // added by the aggregate stage's row loop
  double seconds = 0;
  // CPU time of the benchmark thread: on a shared machine the wall-clock rate
  // says how much of a core the thread got, the CPU rate what one core does.
  double cpu_seconds = 0;
  double packets_per_second = 0;
  double packets_per_cpu_second = 0;
  double values_per_second = 0;
  double register_share = 0;  // of the profile's register memory
  std::uint64_t register_bits_used = 0;
  std::uint64_t register_bits_budget = 0;
};

// Replays `traffic` for at least `seconds` (whole epochs). Throws
// std::invalid_argument if the job does not fit `profile`, std::logic_error
// if a packet is dropped or seen as a duplicate.
ProgramBenchmarkResult RunProgramBenchmark(const BenchTraffic& traffic, double seconds,
                                           const PipelineProfile& profile);

}  // namespace libra::dataplane
