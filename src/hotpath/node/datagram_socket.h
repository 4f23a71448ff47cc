// The hot-path engines' UDP socket: non-blocking, batched both ways
// (sendmmsg / recvmmsg), with an eventfd beside it so that API calls can wake
// the I/O thread out of its wait.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "wire/switch_job.h"
#include "wire/wire.h"

namespace libra::hotpath {

class DatagramSocket {
 public:
  // Binds to `local` (port 0: the kernel picks one); throws std::system_error.
  explicit DatagramSocket(const UdpEndpoint& local, int buffer_bytes = 4 << 20);
  ~DatagramSocket();
  DatagramSocket(const DatagramSocket&) = delete;
  DatagramSocket& operator=(const DatagramSocket&) = delete;

  int fd() const { return fd_; }
  UdpEndpoint local() const { return local_; }

  // Wakes a thread blocked in WaitUntil (from any thread).
  void Wake();
  // Waits until a datagram is readable, Wake() is called, or `deadline`
  // passes. Clears a pending wake-up.
  void WaitUntil(std::chrono::steady_clock::time_point deadline);

 private:
  int fd_ = -1;
  int wake_fd_ = -1;
  UdpEndpoint local_;
};

// Datagrams received by one recvmmsg call.
class ReceivedBatch {
 public:
  explicit ReceivedBatch(std::size_t capacity);

  // Takes what is queued on `fd`, up to capacity, without waiting; returns
  // how many datagrams arrived.
  std::size_t Receive(int fd);
  std::span<const std::uint8_t> payload(std::size_t i) const {
    return {buffers_[i].data(), headers_[i].msg_len};
  }

 private:
  // Larger than the biggest message, so that an oversized datagram is seen
  // as such by the decoder instead of being cut to a valid size.
  static constexpr std::size_t kBufferBytes = wire::kMaxMessageBytes + 64;
  std::vector<mmsghdr> headers_;
  std::vector<iovec> iovecs_;
  std::vector<std::array<std::uint8_t, kBufferBytes>> buffers_;
};

// Datagrams to one destination, sent by sendmmsg when Flush() is called or
// the batch is full. The bytes are referenced, not copied: they must stay
// valid until the next Flush().
class SendBatch {
 public:
  SendBatch(int fd, const UdpEndpoint& destination, std::size_t capacity);

  void Add(std::span<const std::uint8_t> bytes);
  void Flush();

  std::uint64_t packets_sent() const { return packets_sent_; }
  std::uint64_t bytes_sent() const { return bytes_sent_; }
  // Datagrams the kernel refused (a full socket buffer): they count as lost
  // and are recovered like any other loss.
  std::uint64_t errors() const { return errors_; }

 private:
  int fd_;
  sockaddr_in destination_;
  std::vector<mmsghdr> headers_;
  std::vector<iovec> iovecs_;
  std::size_t queued_ = 0;
  std::uint64_t packets_sent_ = 0;
  std::uint64_t bytes_sent_ = 0;
  std::uint64_t errors_ = 0;
};

}  // namespace libra::hotpath
