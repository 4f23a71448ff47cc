// Throughput of the switch program alone, in one thread: DATA packets from
// several workers, every one new (no duplicates), each answered with an ACK.
#pragma once

#include <cstdint>

#include "libra/pipeline_profile.h"

namespace libra::dataplane {

struct ProgramBenchmarkOptions {
  int workers = 8;
  int slots_per_packet = 32;
  std::uint32_t cells_per_array = 8192;
  std::uint32_t packets_per_worker = 1024;  // per epoch
  // false: packet k carries row k of every array (how a packer fills packets
  // when every array's queue holds the same rows); true: slot j of packet k
  // carries a row drawn from a shuffle of array j's rows (sparse pushes),
  // so a packet's cells lie in P different rows.
  bool scattered_rows = false;
  int scale_bits = 16;
  double seconds = 2.0;
};

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

ProgramBenchmarkResult RunProgramBenchmark(const ProgramBenchmarkOptions& options,
                                           const PipelineProfile& profile);

}  // namespace libra::dataplane
