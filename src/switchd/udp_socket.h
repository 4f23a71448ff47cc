// A UDP socket that moves packets in batches (recvmmsg / sendmmsg), so one
// system call carries up to a batch of packets each way.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "libra/switch_job.h"
#include "libra/wire.h"

namespace libra::switchd {

class UdpSocket {
 public:
  // Binds to `local` (port 0: the kernel picks one); throws std::system_error.
  explicit UdpSocket(const UdpEndpoint& local, int buffer_bytes = 4 << 20);
  ~UdpSocket();
  UdpSocket(const UdpSocket&) = delete;
  UdpSocket& operator=(const UdpSocket&) = delete;

  int fd() const { return fd_; }
  UdpEndpoint local() const;

  // Sends one datagram; false on error.
  bool SendTo(std::span<const std::uint8_t> bytes, const UdpEndpoint& to);
  // Receives one datagram, waiting at most timeout_ms (-1: forever). Returns
  // its length, or -1 on timeout or error.
  int ReceiveFrom(std::span<std::uint8_t> buffer, UdpEndpoint* from, int timeout_ms);

 private:
  int fd_ = -1;
};

// Reusable buffers for recvmmsg: one call takes up to `capacity` datagrams.
class ReceiveBatch {
 public:
  explicit ReceiveBatch(std::size_t capacity);

  // Receives what is queued, up to capacity, without waiting; returns the
  // number received (0 when none).
  std::size_t Receive(int fd);
  std::span<const std::uint8_t> payload(std::size_t i) const {
    return {buffers_[i].data(), headers_[i].msg_len};
  }
  UdpEndpoint source(std::size_t i) const;

 private:
  // Larger than the biggest message, so that an oversized datagram is seen
  // (and counted) as oversized rather than cut to size.
  static constexpr std::size_t kBufferBytes = wire::kMaxMessageBytes + 64;
  std::vector<mmsghdr> headers_;
  std::vector<iovec> iovecs_;
  std::vector<sockaddr_in> addresses_;
  std::vector<std::array<std::uint8_t, kBufferBytes>> buffers_;
};

// Datagrams waiting for one sendmmsg; flushes by itself when full.
class SendQueue {
 public:
  SendQueue(int fd, std::size_t capacity);

  void Push(std::span<const std::uint8_t> bytes, const UdpEndpoint& to);
  // Sends everything queued.
  void Flush();
  // Datagrams the kernel refused so far.
  std::uint64_t refused() const { return refused_; }

 private:
  int fd_;
  std::vector<mmsghdr> headers_;
  std::vector<iovec> iovecs_;
  std::vector<sockaddr_in> addresses_;
  std::vector<std::array<std::uint8_t, wire::kMaxMessageBytes>> buffers_;
  std::size_t queued_ = 0;
  std::uint64_t refused_ = 0;
};

sockaddr_in ToSockaddr(const UdpEndpoint& endpoint);
UdpEndpoint FromSockaddr(const sockaddr_in& address);

}  // namespace libra::switchd
