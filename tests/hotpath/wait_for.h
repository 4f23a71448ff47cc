// Waits (at most 5 s) until an engine's I/O thread has done something the
// test can see in its counters; fails the test if it never does.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <thread>

namespace libra::hotpath::testing {

inline void WaitFor(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!done() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_TRUE(done());
}

}  // namespace libra::hotpath::testing
