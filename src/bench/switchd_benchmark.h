// Throughput of libra-switchd over loopback: a switch in this process and
// several sender threads that each keep a window of DATA packets in flight
// and count the ACKs that come back.
#pragma once

#include <cstdint>

namespace libra::switchd {

struct SwitchdBenchmarkOptions {
  int senders = 4;
  int slots_per_packet = 32;
  std::uint32_t cells_per_array = 8192;
  int window = 64;  // un-ACKed DATA packets per sender (at most the dedup window)
  double seconds = 3.0;
};

struct SwitchdBenchmarkResult {
  std::uint64_t packets_acked = 0;  // distinct DATA packets ACKed
  std::uint64_t packets_sent = 0;   // including retransmissions
  std::uint64_t switch_data_packets = 0;
  std::uint64_t switch_values_aggregated = 0;
  double seconds = 0;
  // CPU time, user + system, of the switch's thread and of the whole process
  // (switch and senders) during the run. On a shared machine the switch's
  // rate per CPU second is what one core of switchd sustains.
  double switch_cpu_seconds = 0;
  double process_cpu_seconds = 0;
  double packets_per_second = 0;
  double packets_per_switch_cpu_second = 0;
  double values_per_second = 0;
};

SwitchdBenchmarkResult RunSwitchdBenchmark(const SwitchdBenchmarkOptions& options);

}  // namespace libra::switchd
