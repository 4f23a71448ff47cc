// HotCollector against a scripted switch on loopback (a UDP socket of the
// test): which COLLECTs it resends, and when, if a RESULT is lost.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "libra/hotpath_collector.h"
#include "libra/placement.h"
#include "libra/wire.h"
#include "switchd/udp_socket.h"

namespace libra::hotpath {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr std::uint32_t kJobId = 5;

std::shared_ptr<const hot::HotSet> MakeHotSet() {
  std::vector<hot::HotKey> keys;
  for (int k = 0; k < 200; ++k) keys.push_back({static_cast<hot::Key>(k), 1, 1000u - k});
  // 8 arrays: 25 rows, so one COLLECT per row and 25 of them.
  return std::make_shared<const hot::HotSet>(
      hot::PlaceHotSet(keys, hot::SwitchLayout{8, 64, 2}, hot::HeatPlacement()));
}

// The switch's side: READY for epoch 0, then a RESULT (nothing written) for
// every COLLECT except the first send of packet `lose`.
struct ScriptedSwitch {
  switchd::UdpSocket socket{UdpEndpoint{0x7f000001, 0}};
  std::map<std::uint32_t, int> asked;    // COLLECTs received per packet
  std::map<std::uint32_t, int> resends;  // ... of them flagged RETRANSMISSION

  void Send(wire::MessageType type, std::uint32_t seq, const UdpEndpoint& to) {
    wire::Header header;
    header.type = type;
    header.job_id = kJobId;
    header.node_id = 0;
    header.epoch = 0;
    header.seq = seq;
    std::array<std::uint8_t, wire::kHeaderBytes> bytes{};
    ASSERT_EQ(wire::Encode(header, {}, bytes), bytes.size());
    ASSERT_TRUE(socket.SendTo(bytes, to));
  }

  // Answers until the collector delivers the epoch or `deadline` passes.
  void Serve(const UdpEndpoint& collector, std::uint32_t lose, std::function<bool()> done,
             Clock::time_point deadline) {
    Send(wire::MessageType::kReady, 0, collector);
    std::array<std::uint8_t, wire::kMaxMessageBytes + 64> buffer{};
    while (!done() && Clock::now() < deadline) {
      UdpEndpoint from;
      const int n = socket.ReceiveFrom(buffer, &from, 20);
      if (n <= 0) continue;
      wire::Header header;
      const auto bytes = std::span<const std::uint8_t>(buffer.data(), static_cast<std::size_t>(n));
      if (wire::DecodeHeader(bytes, &header) != wire::DecodeError::kNone) continue;
      if (header.type != wire::MessageType::kCollect) continue;
      if ((header.flags & wire::kFlagRetransmission) != 0) ++resends[header.seq];
      if (++asked[header.seq] == 1 && header.seq == lose) continue;  // this RESULT is "lost"
      Send(wire::MessageType::kResult, header.seq, from);
    }
  }
};

TEST(HotCollectorLoss, ALostResultIsResentOnceLaterOnesAreAnsweredNotAfterATimeout) {
  const auto hot_set = MakeHotSet();
  std::vector<hot::Key> owned;
  for (const hot::HotKey& key : hot_set->keys()) owned.push_back(key.key);
  std::sort(owned.begin(), owned.end());
  ScriptedSwitch sw;
  HotCollectorOptions options;
  options.job_id = kJobId;
  options.server_id = 0;
  options.switch_address = sw.socket.local();
  options.num_workers = 2;
  options.collect_by_row = true;
  options.written_rows_grace = 0ms;
  // A timeout far longer than the test: only loss detection by order can
  // resend in time.
  options.retry.initial_timeout = 30s;
  options.retry.max_timeout = 30s;
  std::optional<CollectedEpoch> collected;
  std::mutex mutex;
  HotCollector collector(hot_set, owned, options, [&](CollectedEpoch epoch) {
    std::lock_guard lock(mutex);
    collected = std::move(epoch);
  });
  constexpr std::uint32_t kLost = 3;
  sw.Serve(
      collector.local(), kLost,
      [&] {
        std::lock_guard lock(mutex);
        return collected.has_value();
      },
      Clock::now() + 10s);
  std::lock_guard lock(mutex);
  ASSERT_TRUE(collected.has_value());
  EXPECT_EQ(collected->status, HotPathStatus::kOk);
  EXPECT_EQ(collected->epoch, 0u);
  const HotCollectorCounters counters = collector.counters();
  EXPECT_EQ(counters.collect_packets, 25u);
  EXPECT_EQ(counters.timeouts, 0u);
  EXPECT_EQ(counters.fast_retransmissions, 1u);
  EXPECT_EQ(counters.retransmissions, 1u);
  // (Packet 0 may also have been asked once as a poll, if that went out
  // before READY came.)
  EXPECT_EQ(sw.asked[kLost], 2);
  EXPECT_EQ(sw.resends, (std::map<std::uint32_t, int>{{kLost, 1}}));
}

}  // namespace
}  // namespace libra::hotpath
