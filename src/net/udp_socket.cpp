#include "net/udp_socket.h"

#include <arpa/inet.h>
#include <netinet/udp.h>
#include <poll.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

namespace libra::net {

sockaddr_in ToSockaddr(const UdpEndpoint& endpoint) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(endpoint.ipv4);
  address.sin_port = htons(endpoint.port);
  return address;
}

UdpEndpoint FromSockaddr(const sockaddr_in& address) {
  return UdpEndpoint{ntohl(address.sin_addr.s_addr), ntohs(address.sin_port)};
}

UdpSocket::UdpSocket(const UdpEndpoint& local, UdpSocketOptions options) {
  const int type = SOCK_DGRAM | SOCK_CLOEXEC | (options.non_blocking ? SOCK_NONBLOCK : 0);
  fd_ = ::socket(AF_INET, type, 0);
  if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "udp socket");
  const int buffer_bytes = options.buffer_bytes;
  if (::setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &buffer_bytes, sizeof(buffer_bytes)) != 0) {
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &buffer_bytes, sizeof(buffer_bytes));
  }
  if (::setsockopt(fd_, SOL_SOCKET, SO_SNDBUFFORCE, &buffer_bytes, sizeof(buffer_bytes)) != 0) {
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &buffer_bytes, sizeof(buffer_bytes));
  }
  if (options.tos != 0) {
    ::setsockopt(fd_, IPPROTO_IP, IP_TOS, &options.tos, sizeof(options.tos));
  }
  const sockaddr_in address = ToSockaddr(local);
  if (::bind(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
    const int error = errno;
    ::close(fd_);
    throw std::system_error(error, std::generic_category(), "udp socket: bind " + local.ToString());
  }
  sockaddr_in bound{};
  socklen_t length = sizeof(bound);
  ::getsockname(fd_, reinterpret_cast<sockaddr*>(&bound), &length);
  local_ = FromSockaddr(bound);
}

UdpSocket::~UdpSocket() { ::close(fd_); }

int UdpSocket::ReceiveBufferBytes() const {
  int bytes = 0;
  socklen_t length = sizeof(bytes);
  if (::getsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &bytes, &length) != 0) return 0;
  return bytes;
}

void UdpSocket::SetReceiveTimeout(int milliseconds) {
  const timeval timeout{milliseconds / 1000, (milliseconds % 1000) * 1000};
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
}

bool UdpSocket::SendTo(std::span<const std::uint8_t> bytes, const UdpEndpoint& to) {
  const sockaddr_in address = ToSockaddr(to);
  return ::sendto(fd_, bytes.data(), bytes.size(), 0, reinterpret_cast<const sockaddr*>(&address),
                  sizeof(address)) == static_cast<ssize_t>(bytes.size());
}

int UdpSocket::ReceiveFrom(std::span<std::uint8_t> buffer, UdpEndpoint* from, int timeout_ms) {
  pollfd waiting{fd_, POLLIN, 0};
  if (::poll(&waiting, 1, timeout_ms) <= 0) return -1;
  sockaddr_in address{};
  socklen_t length = sizeof(address);
  const ssize_t n = ::recvfrom(fd_, buffer.data(), buffer.size(), MSG_DONTWAIT,
                               reinterpret_cast<sockaddr*>(&address), &length);
  if (n < 0) return -1;
  if (from != nullptr) *from = FromSockaddr(address);
  return static_cast<int>(n);
}

namespace {

void PointAt(mmsghdr& header, iovec* iov, std::size_t iov_count, sockaddr_in& address) {
  header.msg_hdr = msghdr{};
  header.msg_hdr.msg_iov = iov;
  header.msg_hdr.msg_iovlen = iov_count;
  header.msg_hdr.msg_name = &address;
  header.msg_hdr.msg_namelen = sizeof(sockaddr_in);
}

// A send refused for want of room in the socket's queue, not for what it is.
bool QueueFull(int error) { return error == EAGAIN || error == EWOULDBLOCK || error == ENOBUFS; }

// The segment size of a coalesced message, or 0 when it is one datagram.
std::size_t SegmentSize(const msghdr& header) {
  for (const cmsghdr* c = CMSG_FIRSTHDR(&header); c != nullptr;
       c = CMSG_NXTHDR(const_cast<msghdr*>(&header), const_cast<cmsghdr*>(c))) {
    if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
      int size = 0;
      std::memcpy(&size, CMSG_DATA(c), std::min(sizeof(size), c->cmsg_len - CMSG_LEN(0)));
      return size > 0 ? static_cast<std::size_t>(size) : 0;
    }
  }
  return 0;
}

}  // namespace

bool UdpSocket::EnableReceiveCoalescing() {
  const int on = 1;
  return ::setsockopt(fd_, SOL_UDP, UDP_GRO, &on, sizeof(on)) == 0;
}

ReceiveBatch::ReceiveBatch(std::size_t capacity, bool coalesced)
    : buffer_bytes_(coalesced ? kCoalescedBufferBytes : kBufferBytes),
      headers_(capacity),
      iovecs_(capacity),
      addresses_(capacity),
      controls_(capacity),
      buffers_(new std::uint8_t[capacity * buffer_bytes_]) {
  datagrams_.reserve(coalesced ? capacity * 8 : capacity);
  for (std::size_t i = 0; i < capacity; ++i) {
    iovecs_[i] = iovec{buffers_.get() + i * buffer_bytes_, buffer_bytes_};
    PointAt(headers_[i], &iovecs_[i], 1, addresses_[i]);
  }
}

std::size_t ReceiveBatch::Receive(int fd) { return ReceiveWithFlags(fd, MSG_DONTWAIT); }

std::size_t ReceiveBatch::ReceiveWaiting(int fd) { return ReceiveWithFlags(fd, MSG_WAITFORONE); }

std::size_t ReceiveBatch::ReceiveWithFlags(int fd, int flags) {
  // The kernel shrinks msg_namelen and msg_controllen to what it wrote.
  for (std::size_t i = 0; i < headers_.size(); ++i) {
    headers_[i].msg_hdr.msg_namelen = sizeof(sockaddr_in);
    headers_[i].msg_hdr.msg_control = controls_[i].data();
    headers_[i].msg_hdr.msg_controllen = controls_[i].size();
  }
  datagrams_.clear();
  const int n =
      ::recvmmsg(fd, headers_.data(), static_cast<unsigned>(headers_.size()), flags, nullptr);
  for (int m = 0; m < n; ++m) {
    const std::size_t base = static_cast<std::size_t>(m) * buffer_bytes_;
    const std::size_t length = headers_[m].msg_len;
    const std::size_t segment = SegmentSize(headers_[m].msg_hdr);
    const std::size_t step = segment == 0 ? std::max<std::size_t>(length, 1) : segment;
    // A zero-length datagram is still a datagram (the program counts it).
    std::size_t offset = 0;
    do {
      const std::size_t piece = std::min(step, length - offset);
      // A coalescing batch's larger buffers must not change what a datagram
      // is: one over kBufferBytes is seen cut to that, as without coalescing.
      const std::size_t kept = std::min(piece, kBufferBytes);
      datagrams_.push_back(
          {base + offset, static_cast<std::uint32_t>(kept), static_cast<std::uint32_t>(m)});
      offset += piece;
    } while (offset < length);
  }
  return datagrams_.size();
}

UdpEndpoint ReceiveBatch::source(std::size_t i) const {
  return FromSockaddr(addresses_[datagrams_[i].message]);
}

SendQueue::SendQueue(int fd, std::size_t capacity, bool segmentation)
    : fd_(fd),
      segmentation_(segmentation),
      iovecs_(capacity),
      addresses_(capacity),
      buffers_(capacity),
      messages_(capacity),
      controls_(capacity) {}

void SendQueue::Push(std::span<const std::uint8_t> bytes, const UdpEndpoint& to) {
  if (bytes.size() > wire::kMaxMessageBytes) {
    ++refused_;
    return;
  }
  const std::size_t i = queued_;
  std::memcpy(buffers_[i].data(), bytes.data(), bytes.size());
  PushView({buffers_[i].data(), bytes.size()}, to);
}

void SendQueue::PushView(std::span<const std::uint8_t> bytes, const UdpEndpoint& to) {
  const std::size_t i = queued_++;
  iovecs_[i] = iovec{const_cast<std::uint8_t*>(bytes.data()), bytes.size()};
  addresses_[i] = ToSockaddr(to);
  if (queued_ == iovecs_.size()) Flush();
}

std::size_t SendQueue::BuildMessages() {
  std::size_t count = 0;
  for (std::size_t i = 0; i < queued_; ++count) {
    std::size_t end = i + 1;
    if (segmentation_) {
      const std::size_t size = iovecs_[i].iov_len;
      while (end < queued_ && end - i < kMaxSegments &&
             (end - i + 1) * size <= kMaxSegmentedBytes && iovecs_[end].iov_len == size &&
             addresses_[end].sin_port == addresses_[i].sin_port &&
             addresses_[end].sin_addr.s_addr == addresses_[i].sin_addr.s_addr) {
        ++end;
      }
    }
    mmsghdr& message = messages_[count];
    PointAt(message, &iovecs_[i], end - i, addresses_[i]);
    if (end - i > 1) {
      cmsghdr* c = reinterpret_cast<cmsghdr*>(controls_[count].data());
      c->cmsg_level = SOL_UDP;
      c->cmsg_type = UDP_SEGMENT;
      c->cmsg_len = CMSG_LEN(sizeof(std::uint16_t));
      const auto segment = static_cast<std::uint16_t>(iovecs_[i].iov_len);
      std::memcpy(CMSG_DATA(c), &segment, sizeof(segment));
      message.msg_hdr.msg_control = c;
      message.msg_hdr.msg_controllen = CMSG_SPACE(sizeof(std::uint16_t));
    }
    i = end;
  }
  return count;
}

void SendQueue::SendUnsegmented(std::size_t m) {
  const msghdr& segmented = messages_[m].msg_hdr;
  for (std::size_t k = 0; k < segmented.msg_iovlen; ++k) {
    msghdr single{};
    single.msg_iov = &segmented.msg_iov[k];
    single.msg_iovlen = 1;
    single.msg_name = segmented.msg_name;
    single.msg_namelen = sizeof(sockaddr_in);
    const ssize_t n = ::sendmsg(fd_, &single, 0);
    if (n < 0) {
      ++refused_;
    } else {
      ++packets_sent_;
      bytes_sent_ += static_cast<std::uint64_t>(n);
    }
  }
}

void SendQueue::Flush() {
  const std::size_t count = BuildMessages();
  std::size_t sent = 0;
  while (sent < count) {
    const int n = ::sendmmsg(fd_, messages_.data() + sent, static_cast<unsigned>(count - sent), 0);
    if (n > 0) {
      for (int m = 0; m < n; ++m) {
        packets_sent_ += messages_[sent + m].msg_hdr.msg_iovlen;  // a segmented send's datagrams
        bytes_sent_ += messages_[sent + m].msg_len;
      }
      sent += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      // The kernel will not take this message. A full queue (a non-blocking
      // socket) refuses its datagrams, segmented or not: they count as
      // lost. Any other refusal of a segmented send means the kernel or the
      // route cannot segment: stop segmenting and send it plainly.
      const std::size_t datagrams = messages_[sent].msg_hdr.msg_iovlen;
      if (datagrams > 1 && !QueueFull(errno)) {
        segmentation_ = false;
        SendUnsegmented(sent);
      } else {
        refused_ += datagrams;
      }
      ++sent;
    }
  }
  queued_ = 0;
}

}  // namespace libra::net
