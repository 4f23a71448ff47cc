// The batched UDP socket layer of every Libra process that speaks the hot
// path's datagrams: the switch daemon, the hot path's sender and collector
// on the hosts, the benchmarks and tests. A UdpSocket is bound to a local
// address; ReceiveBatch and SendQueue move datagrams through it in batches
// (recvmmsg / sendmmsg), so one system call carries up to a batch of
// datagrams each way. Waker (waker.h) lets another thread interrupt a wait.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "wire/switch_job.h"
#include "wire/wire.h"

namespace libra::net {

// The type-of-service byte of the hot path's packets, hosts' and switchd's:
// IPTOS_LOWDELAY (docs/hotpath.md, "Threads and timeouts").
inline constexpr int kHotPathTos = 0x10;

struct UdpSocketOptions {
  // The kernel queues are asked for this much each way (capped by
  // net.core.rmem_max / wmem_max; forced past the cap with CAP_NET_ADMIN).
  // Big queues absorb the bursts of a batch of senders; without them the
  // loopback drops whole windows and the senders stall on timeouts.
  int buffer_bytes = 8 << 20;
  // A non-blocking socket never waits in a send: a datagram the kernel
  // cannot queue is refused (and counted) instead. The hot path's engines
  // want that, since their retransmissions cover a loss; a blocking socket
  // suits a program that wants each datagram out.
  bool non_blocking = false;
  // The IP header's type-of-service byte of every datagram sent (0: left
  // as the kernel sets it). The hot path marks its packets low-delay
  // (IPTOS_LOWDELAY), the class a network with priority queues serves
  // first; on a single FIFO the mark changes nothing.
  int tos = 0;
};

class UdpSocket {
 public:
  // Binds to `local` (port 0: the kernel picks one); throws std::system_error.
  explicit UdpSocket(const UdpEndpoint& local, UdpSocketOptions options = {});
  ~UdpSocket();
  UdpSocket(const UdpSocket&) = delete;
  UdpSocket& operator=(const UdpSocket&) = delete;

  int fd() const { return fd_; }
  // What the kernel lets this socket queue on receipt, in its own
  // accounting (SO_RCVBUF: Linux charges each datagram about twice its
  // bytes, and reports double the size asked for).
  int ReceiveBufferBytes() const;
  // The bound address (with the port the kernel picked).
  UdpEndpoint local() const { return local_; }

  // Asks the kernel to pass segmented sends to this socket as one message
  // (UDP_GRO); read it with a coalescing ReceiveBatch. False when the kernel
  // cannot.
  bool EnableReceiveCoalescing();

  // Waiting receives (ReceiveBatch::ReceiveWaiting, on a blocking socket)
  // give up after this long.
  void SetReceiveTimeout(int milliseconds);

  // Sends one datagram; false on error.
  bool SendTo(std::span<const std::uint8_t> bytes, const UdpEndpoint& to);
  // Receives one datagram, waiting at most timeout_ms (-1: forever). Returns
  // its length, or -1 on timeout or error.
  int ReceiveFrom(std::span<std::uint8_t> buffer, UdpEndpoint* from, int timeout_ms);

 private:
  int fd_ = -1;
  UdpEndpoint local_;
};

// Reusable buffers for recvmmsg: one call takes up to `capacity` messages.
//
// With coalescing (the socket's EnableReceiveCoalescing succeeded), the
// kernel hands over a run of same-sized datagrams that one sender sent as a
// segmented send (UDP GSO) as one message of up to 64 KiB, and a control
// message gives the segment size; the batch splits it back into datagrams.
// One such message costs the kernel about what one datagram does, which on
// loopback is most of the cost of a datagram.
class ReceiveBatch {
 public:
  explicit ReceiveBatch(std::size_t capacity, bool coalesced = false);
  ReceiveBatch(const ReceiveBatch&) = delete;  // the headers point into the buffers
  ReceiveBatch& operator=(const ReceiveBatch&) = delete;

  // Receives what is queued, up to capacity messages, without waiting;
  // returns the number of datagrams received (0 when none).
  std::size_t Receive(int fd);
  // Waits for the first message (at most the socket's SO_RCVTIMEO; on a
  // non-blocking socket not at all), then takes what else is queued, up to
  // capacity: one system call either way.
  std::size_t ReceiveWaiting(int fd);
  std::span<const std::uint8_t> payload(std::size_t i) const {
    return {buffers_.get() + datagrams_[i].offset, datagrams_[i].length};
  }
  UdpEndpoint source(std::size_t i) const;
  // The messages the kernel handed over in the last receive (a coalesced
  // run is one message, however many datagrams it held).
  std::size_t messages() const { return datagrams_.empty() ? 0 : datagrams_.back().message + 1; }

 private:
  struct Datagram {
    std::size_t offset;     // into buffers_
    std::uint32_t length;   // bytes
    std::uint32_t message;  // which received message (for its source)
  };

  std::size_t ReceiveWithFlags(int fd, int flags);

  // Larger than the biggest message, so that an oversized datagram is seen
  // (and counted) as oversized rather than cut to size.
  static constexpr std::size_t kBufferBytes = wire::kMaxMessageBytes + 64;
  static constexpr std::size_t kCoalescedBufferBytes = 65536;
  static constexpr std::size_t kControlBytes = 64;

  std::size_t buffer_bytes_;
  std::vector<mmsghdr> headers_;
  std::vector<iovec> iovecs_;
  std::vector<sockaddr_in> addresses_;
  std::vector<std::array<char, kControlBytes>> controls_;
  // Left uninitialised: a page is touched only once the kernel writes to it.
  std::unique_ptr<std::uint8_t[]> buffers_;
  std::vector<Datagram> datagrams_;
};

// Datagrams waiting for one sendmmsg; flushes by itself when full. A
// datagram the kernel refuses (a full queue on a non-blocking socket, an
// unreachable destination) is dropped and counted: the protocol's
// retransmissions cover it as they cover any loss.
//
// With segmentation on, each run of consecutive datagrams to the same
// destination with the same length (up to 64) leaves as one segmented send
// (UDP GSO): the receiver still gets separate datagrams, or one coalesced
// message if it asked for them (ReceiveBatch), and the kernel's per-datagram
// work is done once per run.
class SendQueue {
 public:
  SendQueue(int fd, std::size_t capacity, bool segmentation = false);

  // Copies `bytes` into the queue.
  void Push(std::span<const std::uint8_t> bytes, const UdpEndpoint& to);
  // Queues `bytes` without copying them: they must stay valid and unchanged
  // until the next Flush (the switch's output buffers live that long).
  void PushView(std::span<const std::uint8_t> bytes, const UdpEndpoint& to);
  // Sends everything queued.
  void Flush();
  // So far: datagrams and their bytes the kernel took, and datagrams it
  // refused.
  std::uint64_t packets_sent() const { return packets_sent_; }
  std::uint64_t bytes_sent() const { return bytes_sent_; }
  std::uint64_t refused() const { return refused_; }

 private:
  // Groups the queued datagrams into messages (runs, when segmenting).
  std::size_t BuildMessages();
  // Sends message m's datagrams one by one (a segmented send was refused).
  void SendUnsegmented(std::size_t m);

  static constexpr std::size_t kMaxSegments = 64;  // the kernel's UDP_MAX_SEGMENTS
  static constexpr std::size_t kMaxSegmentedBytes = 60000;

  int fd_;
  bool segmentation_;
  std::vector<iovec> iovecs_;
  std::vector<sockaddr_in> addresses_;
  std::vector<std::array<std::uint8_t, wire::kMaxMessageBytes>> buffers_;
  std::vector<mmsghdr> messages_;
  std::vector<std::array<char, 64>> controls_;
  std::size_t queued_ = 0;
  std::uint64_t packets_sent_ = 0;
  std::uint64_t bytes_sent_ = 0;
  std::uint64_t refused_ = 0;
};

sockaddr_in ToSockaddr(const UdpEndpoint& endpoint);
UdpEndpoint FromSockaddr(const sockaddr_in& address);

}  // namespace libra::net
