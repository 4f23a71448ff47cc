#include "udp_socket.h"

#include <arpa/inet.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

namespace libra::switchd {

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

UdpSocket::UdpSocket(const UdpEndpoint& local, int buffer_bytes) {
  fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "socket");
  // Bigger kernel queues absorb bursts; the kernel caps them at its maximum.
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &buffer_bytes, sizeof(buffer_bytes));
  ::setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &buffer_bytes, sizeof(buffer_bytes));
  const sockaddr_in address = ToSockaddr(local);
  if (::bind(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
    const int error = errno;
    ::close(fd_);
    throw std::system_error(error, std::generic_category(), "bind " + local.ToString());
  }
}

UdpSocket::~UdpSocket() { ::close(fd_); }

UdpEndpoint UdpSocket::local() const {
  sockaddr_in address{};
  socklen_t length = sizeof(address);
  ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
  return FromSockaddr(address);
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

void PointAt(mmsghdr& header, iovec& iov, sockaddr_in& address) {
  header.msg_hdr = msghdr{};
  header.msg_hdr.msg_iov = &iov;
  header.msg_hdr.msg_iovlen = 1;
  header.msg_hdr.msg_name = &address;
  header.msg_hdr.msg_namelen = sizeof(sockaddr_in);
}

}  // namespace

ReceiveBatch::ReceiveBatch(std::size_t capacity)
    : headers_(capacity), iovecs_(capacity), addresses_(capacity), buffers_(capacity) {}

std::size_t ReceiveBatch::Receive(int fd) {
  for (std::size_t i = 0; i < headers_.size(); ++i) {
    iovecs_[i] = iovec{buffers_[i].data(), buffers_[i].size()};
    PointAt(headers_[i], iovecs_[i], addresses_[i]);
  }
  const int n = ::recvmmsg(fd, headers_.data(), static_cast<unsigned>(headers_.size()),
                           MSG_DONTWAIT, nullptr);
  return n < 0 ? 0 : static_cast<std::size_t>(n);
}

UdpEndpoint ReceiveBatch::source(std::size_t i) const { return FromSockaddr(addresses_[i]); }

SendQueue::SendQueue(int fd, std::size_t capacity)
    : fd_(fd), headers_(capacity), iovecs_(capacity), addresses_(capacity), buffers_(capacity) {}

void SendQueue::Push(std::span<const std::uint8_t> bytes, const UdpEndpoint& to) {
  if (bytes.size() > wire::kMaxMessageBytes) {
    ++refused_;
    return;
  }
  const std::size_t i = queued_++;
  std::memcpy(buffers_[i].data(), bytes.data(), bytes.size());
  iovecs_[i] = iovec{buffers_[i].data(), bytes.size()};
  addresses_[i] = ToSockaddr(to);
  PointAt(headers_[i], iovecs_[i], addresses_[i]);
  if (queued_ == headers_.size()) Flush();
}

void SendQueue::Flush() {
  std::size_t sent = 0;
  while (sent < queued_) {
    const int n = ::sendmmsg(fd_, headers_.data() + sent, static_cast<unsigned>(queued_ - sent), 0);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      ++refused_;  // skip the datagram the kernel will not take
      ++sent;
    }
  }
  queued_ = 0;
}

}  // namespace libra::switchd
