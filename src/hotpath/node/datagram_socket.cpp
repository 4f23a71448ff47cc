#include "hotpath/node/datagram_socket.h"

#include <arpa/inet.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace libra::hotpath {
namespace {

sockaddr_in ToSockaddr(const UdpEndpoint& endpoint) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(endpoint.ipv4);
  address.sin_port = htons(endpoint.port);
  return address;
}

[[noreturn]] void ThrowErrno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

}  // namespace

DatagramSocket::DatagramSocket(const UdpEndpoint& local, int buffer_bytes) {
  fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) ThrowErrno("hotpath: socket");
  // Bursts of DATA, COLLECT or REPLICA packets should queue rather than
  // drop. Without CAP_NET_ADMIN the kernel caps the request at
  // net.core.[rw]mem_max (often 208 KiB, less than a window of COLLECTs).
  if (::setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &buffer_bytes, sizeof(buffer_bytes)) != 0) {
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &buffer_bytes, sizeof(buffer_bytes));
  }
  if (::setsockopt(fd_, SOL_SOCKET, SO_SNDBUFFORCE, &buffer_bytes, sizeof(buffer_bytes)) != 0) {
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &buffer_bytes, sizeof(buffer_bytes));
  }
  const sockaddr_in address = ToSockaddr(local);
  if (::bind(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
    const int error = errno;
    ::close(fd_);
    throw std::system_error(error, std::generic_category(), "hotpath: bind " + local.ToString());
  }
  sockaddr_in bound{};
  socklen_t length = sizeof(bound);
  ::getsockname(fd_, reinterpret_cast<sockaddr*>(&bound), &length);
  local_ = UdpEndpoint{ntohl(bound.sin_addr.s_addr), ntohs(bound.sin_port)};
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) {
    const int error = errno;
    ::close(fd_);
    throw std::system_error(error, std::generic_category(), "hotpath: eventfd");
  }
}

DatagramSocket::~DatagramSocket() {
  ::close(wake_fd_);
  ::close(fd_);
}

void DatagramSocket::Wake() {
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_fd_, &one, sizeof(one));
}

void DatagramSocket::WaitUntil(std::chrono::steady_clock::time_point deadline) {
  const auto wait = deadline - std::chrono::steady_clock::now();
  const auto nanos =
      std::max<std::int64_t>(0, std::chrono::duration_cast<std::chrono::nanoseconds>(wait).count());
  const timespec timeout{static_cast<time_t>(nanos / 1'000'000'000),
                         static_cast<long>(nanos % 1'000'000'000)};
  pollfd fds[2] = {{fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
  if (::ppoll(fds, 2, &timeout, nullptr) > 0 && (fds[1].revents & POLLIN) != 0) {
    std::uint64_t count = 0;
    [[maybe_unused]] const ssize_t n = ::read(wake_fd_, &count, sizeof(count));
  }
}

ReceivedBatch::ReceivedBatch(std::size_t capacity)
    : headers_(capacity), iovecs_(capacity), buffers_(capacity) {}

std::size_t ReceivedBatch::Receive(int fd) {
  for (std::size_t i = 0; i < headers_.size(); ++i) {
    iovecs_[i] = iovec{buffers_[i].data(), buffers_[i].size()};
    headers_[i] = mmsghdr{};
    headers_[i].msg_hdr.msg_iov = &iovecs_[i];
    headers_[i].msg_hdr.msg_iovlen = 1;
  }
  const int n = ::recvmmsg(fd, headers_.data(), static_cast<unsigned>(headers_.size()),
                           MSG_DONTWAIT, nullptr);
  return n < 0 ? 0 : static_cast<std::size_t>(n);
}

SendBatch::SendBatch(int fd, const UdpEndpoint& destination, std::size_t capacity)
    : fd_(fd), destination_(ToSockaddr(destination)), headers_(capacity), iovecs_(capacity) {}

void SendBatch::Add(std::span<const std::uint8_t> bytes) {
  const std::size_t i = queued_++;
  iovecs_[i] = iovec{const_cast<std::uint8_t*>(bytes.data()), bytes.size()};
  headers_[i] = mmsghdr{};
  headers_[i].msg_hdr.msg_iov = &iovecs_[i];
  headers_[i].msg_hdr.msg_iovlen = 1;
  headers_[i].msg_hdr.msg_name = &destination_;
  headers_[i].msg_hdr.msg_namelen = sizeof(destination_);
  if (queued_ == headers_.size()) Flush();
}

void SendBatch::Flush() {
  std::size_t done = 0;
  while (done < queued_) {
    const int n = ::sendmmsg(fd_, headers_.data() + done, static_cast<unsigned>(queued_ - done), 0);
    if (n > 0) {
      for (int i = 0; i < n; ++i) bytes_sent_ += headers_[done + i].msg_len;
      packets_sent_ += static_cast<std::uint64_t>(n);
      done += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      ++errors_;  // the datagram the kernel refused is lost; retransmission covers it
      ++done;
    }
  }
  queued_ = 0;
}

}  // namespace libra::hotpath
