// The kernel's own account of a BPF program's cost: with run-time statistics
// on, the kernel adds up, per program, the nanoseconds its runs took
// (bpf_prog_info.run_time_ns) and how many runs there were (run_cnt).
// Turned on by holding the descriptor BPF_ENABLE_STATS returns, which
// leaves the sysctl kernel.bpf_stats_enabled alone for everyone else and
// turns itself off when this process ends. Plain bpf(2) calls: no libbpf.
#pragma once

#include <cstdint>
#include <string>

namespace libra::cluster {

struct BpfRunTime {
  std::uint64_t run_time_ns = 0;
  std::uint64_t run_count = 0;
};

class BpfRunTimeStats {
 public:
  // Turns the statistics on; if the kernel refuses (no root, an old kernel)
  // enabled() is false and error() says why.
  BpfRunTimeStats();
  ~BpfRunTimeStats();
  BpfRunTimeStats(const BpfRunTimeStats&) = delete;
  BpfRunTimeStats& operator=(const BpfRunTimeStats&) = delete;

  bool enabled() const { return fd_ >= 0; }
  const std::string& error() const { return error_; }

  // The totals so far of the loaded program with this id; throws
  // std::runtime_error if there is none.
  static BpfRunTime Of(std::uint32_t program_id);

 private:
  int fd_ = -1;
  std::string error_;
};

}  // namespace libra::cluster
