// The waker ends a wait on a socket early, and only a wait it was meant for.
#include "net/waker.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "net/udp_socket.h"

namespace libra::net {
namespace {

using Clock = std::chrono::steady_clock;

TEST(WakerTest, AWakeBeforeTheWaitEndsItAtOnceAndIsThenCleared) {
  UdpSocket socket({0x7f000001, 0}, {.non_blocking = true});
  Waker waker;
  waker.Wake();
  const auto start = Clock::now();
  waker.WaitUntil(socket.fd(), start + std::chrono::seconds(30));
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(10));
  // Cleared: the next wait runs to its deadline (here, one already past).
  waker.WaitUntil(socket.fd(), Clock::now());
}

TEST(WakerTest, AWakeFromAnotherThreadEndsAWait) {
  UdpSocket socket({0x7f000001, 0}, {.non_blocking = true});
  Waker waker;
  std::thread other([&] { waker.Wake(); });
  const auto start = Clock::now();
  waker.WaitUntil(socket.fd(), start + std::chrono::seconds(30));
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(10));
  other.join();
}

TEST(WakerTest, AReadableSocketEndsAWait) {
  UdpSocket socket({0x7f000001, 0}, {.non_blocking = true});
  UdpSocket sender({0x7f000001, 0});
  const std::uint8_t byte = 1;
  ASSERT_TRUE(sender.SendTo({&byte, 1}, socket.local()));
  Waker waker;
  const auto start = Clock::now();
  waker.WaitUntil(socket.fd(), start + std::chrono::seconds(30));
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(10));
  ReceiveBatch batch(4);
  EXPECT_EQ(batch.Receive(socket.fd()), 1u);
}

}  // namespace
}  // namespace libra::net
