// Batched UDP I/O over loopback: sendmmsg from views, recvmmsg that waits
// for the first datagram and takes the rest of what is queued.
#include "net/udp_socket.h"

#include <gtest/gtest.h>

#include <vector>

namespace libra::net {
namespace {

TEST(UdpSocketTest, SendsViewsInOneBatchAndReceivesThemAll) {
  UdpSocket sender({0x7f000001, 0});
  UdpSocket receiver({0x7f000001, 0});
  receiver.SetReceiveTimeout(2000);
  constexpr std::size_t kDatagrams = 100;
  // The views must outlive the flush: one buffer per datagram.
  std::vector<std::vector<std::uint8_t>> payloads;
  for (std::size_t i = 0; i < kDatagrams; ++i) {
    payloads.push_back(std::vector<std::uint8_t>(1 + i % 50, static_cast<std::uint8_t>(i)));
  }
  SendQueue send(sender.fd(), 64);  // fills and flushes by itself once
  std::uint64_t bytes = 0;
  for (const auto& payload : payloads) {
    send.PushView(payload, receiver.local());
    bytes += payload.size();
  }
  send.Flush();
  EXPECT_EQ(send.refused(), 0u);
  EXPECT_EQ(send.packets_sent(), kDatagrams);
  EXPECT_EQ(send.bytes_sent(), bytes);

  ReceiveBatch receive(32);
  std::size_t received = 0;
  while (received < kDatagrams) {
    const std::size_t n = receive.ReceiveWaiting(receiver.fd());
    ASSERT_GT(n, 0u) << "timed out after " << received;
    for (std::size_t i = 0; i < n; ++i, ++received) {
      const auto bytes = receive.payload(i);
      ASSERT_EQ(std::vector<std::uint8_t>(bytes.begin(), bytes.end()), payloads[received]);
      EXPECT_EQ(receive.source(i), sender.local());
    }
  }
}

// Segmented sends (runs of equal-sized datagrams to one destination), read
// by a receiver that takes them coalesced and by one that does not: both see
// every datagram, in order, with its bytes and its source.
class SegmentedSendTest : public ::testing::TestWithParam<bool> {};

TEST_P(SegmentedSendTest, EveryDatagramArrivesWhole) {
  const bool coalesce = GetParam();
  UdpSocket sender({0x7f000001, 0});
  UdpSocket receiver({0x7f000001, 0});
  receiver.SetReceiveTimeout(2000);
  const bool coalescing = coalesce && receiver.EnableReceiveCoalescing();
  // Runs of 276-byte datagrams broken by a shorter one now and then.
  std::vector<std::vector<std::uint8_t>> payloads;
  for (std::size_t i = 0; i < 300; ++i) {
    const std::size_t size = i % 97 == 96 ? 20 : 276;
    std::vector<std::uint8_t> payload(size);
    for (std::size_t b = 0; b < size; ++b) payload[b] = static_cast<std::uint8_t>(i + b);
    payloads.push_back(std::move(payload));
  }
  SendQueue send(sender.fd(), 128, /*segmentation=*/true);
  for (const auto& payload : payloads) send.Push(payload, receiver.local());
  send.Flush();
  EXPECT_EQ(send.refused(), 0u);
  EXPECT_EQ(send.packets_sent(), payloads.size());  // a segmented send counts its datagrams

  ReceiveBatch receive(16, coalescing);
  std::size_t received = 0;
  while (received < payloads.size()) {
    const std::size_t n = receive.ReceiveWaiting(receiver.fd());
    ASSERT_GT(n, 0u) << "timed out after " << received;
    for (std::size_t i = 0; i < n; ++i, ++received) {
      ASSERT_LT(received, payloads.size());
      const auto bytes = receive.payload(i);
      ASSERT_EQ(std::vector<std::uint8_t>(bytes.begin(), bytes.end()), payloads[received])
          << received;
      EXPECT_EQ(receive.source(i), sender.local());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Receivers, SegmentedSendTest, ::testing::Bool());

TEST(UdpSocketTest, WaitingReceiveGivesUpAfterTheTimeout) {
  UdpSocket socket({0x7f000001, 0});
  socket.SetReceiveTimeout(10);
  ReceiveBatch receive(8);
  EXPECT_EQ(receive.ReceiveWaiting(socket.fd()), 0u);
  EXPECT_EQ(receive.Receive(socket.fd()), 0u);
}

TEST(UdpSocketTest, ANonBlockingSocketNeverWaitsToReceive) {
  UdpSocket socket({0x7f000001, 0}, {.buffer_bytes = 1 << 20, .non_blocking = true});
  EXPECT_NE(socket.local().port, 0);
  ReceiveBatch receive(8);
  EXPECT_EQ(receive.ReceiveWaiting(socket.fd()), 0u);  // no SO_RCVTIMEO needed
}

}  // namespace
}  // namespace libra::net
