// Waking an I/O thread out of its wait for a datagram: the thread waits in
// WaitUntil on its socket and this eventfd at once, and any other thread
// (an API call that queued work for it) calls Wake.
#pragma once

#include <chrono>

namespace libra::net {

class Waker {
 public:
  // Throws std::system_error when the eventfd cannot be made.
  Waker();
  ~Waker();
  Waker(const Waker&) = delete;
  Waker& operator=(const Waker&) = delete;

  // Wakes a thread blocked in WaitUntil, or makes its next WaitUntil return
  // at once (from any thread).
  void Wake();
  // Waits until `fd` is readable, Wake() is called, or `deadline` passes.
  // Clears a pending wake-up.
  void WaitUntil(int fd, std::chrono::steady_clock::time_point deadline);

 private:
  int event_fd_ = -1;
};

}  // namespace libra::net
