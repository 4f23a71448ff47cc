#include "net/waker.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <system_error>

namespace libra::net {

Waker::Waker() {
  event_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (event_fd_ < 0) throw std::system_error(errno, std::generic_category(), "eventfd");
}

Waker::~Waker() { ::close(event_fd_); }

void Waker::Wake() {
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(event_fd_, &one, sizeof(one));
}

void Waker::WaitUntil(int fd, std::chrono::steady_clock::time_point deadline) {
  const auto wait = deadline - std::chrono::steady_clock::now();
  const auto nanos =
      std::max<std::int64_t>(0, std::chrono::duration_cast<std::chrono::nanoseconds>(wait).count());
  const timespec timeout{static_cast<time_t>(nanos / 1'000'000'000),
                         static_cast<long>(nanos % 1'000'000'000)};
  pollfd fds[2] = {{fd, POLLIN, 0}, {event_fd_, POLLIN, 0}};
  if (::ppoll(fds, 2, &timeout, nullptr) > 0 && (fds[1].revents & POLLIN) != 0) {
    std::uint64_t count = 0;
    [[maybe_unused]] const ssize_t n = ::read(event_fd_, &count, sizeof(count));
  }
}

}  // namespace libra::net
