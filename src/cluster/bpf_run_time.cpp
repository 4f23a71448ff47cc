#include "cluster/bpf_run_time.h"

#include <linux/bpf.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace libra::cluster {
namespace {

long Bpf(int command, bpf_attr& attr) { return ::syscall(__NR_bpf, command, &attr, sizeof(attr)); }

}  // namespace

BpfRunTimeStats::BpfRunTimeStats() {
  bpf_attr attr{};
  attr.enable_stats.type = BPF_STATS_RUN_TIME;
  fd_ = static_cast<int>(Bpf(BPF_ENABLE_STATS, attr));
  if (fd_ < 0) error_ = std::string("BPF_ENABLE_STATS: ") + std::strerror(errno);
}

BpfRunTimeStats::~BpfRunTimeStats() {
  if (fd_ >= 0) ::close(fd_);
}

BpfRunTime BpfRunTimeStats::Of(std::uint32_t program_id) {
  bpf_attr attr{};
  attr.prog_id = program_id;
  const int fd = static_cast<int>(Bpf(BPF_PROG_GET_FD_BY_ID, attr));
  if (fd < 0) {
    throw std::runtime_error("BPF program " + std::to_string(program_id) + ": " +
                             std::strerror(errno));
  }
  bpf_prog_info info{};
  bpf_attr query{};
  query.info.bpf_fd = static_cast<std::uint32_t>(fd);
  query.info.info_len = sizeof(info);
  query.info.info = reinterpret_cast<std::uint64_t>(&info);
  const long got = Bpf(BPF_OBJ_GET_INFO_BY_FD, query);
  const int error = errno;
  ::close(fd);
  if (got != 0) {
    throw std::runtime_error("BPF program " + std::to_string(program_id) +
                             " info: " + std::strerror(error));
  }
  return {info.run_time_ns, info.run_cnt};
}

}  // namespace libra::cluster
