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
#include <set>
#include <span>
#include <vector>

#include "hot/placement.h"
#include "hotpath/messages/hot_packets.h"
#include "hotpath/messages/written_keys.h"
#include "hotpath/node/engine_clock.h"
#include "hotpath/server/hot_collector.h"
#include "hotpath/small_hot_set.h"
#include "hotpath/wait_for.h"
#include "net/udp_socket.h"
#include "wire/wire.h"

namespace libra::hotpath {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr std::uint32_t kJobId = 5;

// 8 arrays: 25 rows, so one COLLECT per row and 25 of them.
std::shared_ptr<const hot::HotSet> MakeHotSet() { return testing::TwentyFiveRowHotSet(); }

// What the scripted switch does with a COLLECT: answer it, drop it, or
// answer it after a delay of the collector's clock (as if its RESULT waited
// in a loaded queue). Answers leave in the order the requests came, as
// through a FIFO queue.
struct Verdict {
  enum Kind { kAnswer, kDrop, kHold } kind = kAnswer;
  std::chrono::milliseconds hold{0};
};

// The switch's side: READY for epoch 0, then RESULTs (nothing written, seq
// echoed) as `decide(packet, nth time asked)` says. It also keeps the
// collector's clock (a ManualEngineClock): time moves only while nothing is
// in flight either way (`quiet`), in steps of kStep, so a timer expires when
// the script says and never because the machine was slow, and every count
// below is exact.
struct ScriptedSwitch {
  static constexpr auto kStep = 5ms;
  net::UdpSocket socket{UdpEndpoint{0x7f000001, 0}};
  ManualEngineClock clock;
  std::map<std::uint32_t, int> asked;    // COLLECTs received per packet
  std::map<std::uint32_t, int> resends;  // ... of them flagged RETRANSMISSION
  std::uint64_t received = 0, sent = 0;  // datagrams

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
    ++sent;
  }

  // Serves until `done()`, or 30 s of real time (a broken collector). `quiet`
  // says whether the collector has sent nothing the switch has not
  // received and received everything the switch sent.
  void Serve(const UdpEndpoint& collector, std::function<Verdict(std::uint32_t, int)> decide,
             std::function<bool()> done, std::function<bool()> quiet) {
    Send(wire::MessageType::kReady, 0, collector);
    std::multimap<Clock::time_point, std::uint32_t> held;  // answer time -> seq
    std::array<std::uint8_t, wire::kMaxMessageBytes + 64> buffer{};
    const Clock::time_point give_up = Clock::now() + 30s;
    while (!done() && Clock::now() < give_up) {
      bool released = false;
      while (!held.empty() && held.begin()->first <= clock.Now()) {
        Send(wire::MessageType::kResult, held.begin()->second, collector);
        held.erase(held.begin());
        released = true;
      }
      UdpEndpoint from;
      const int n = socket.ReceiveFrom(buffer, &from, 5);
      if (n <= 0) {
        if (!released && quiet()) clock.Advance(kStep);
        continue;
      }
      ++received;
      wire::Header header;
      const auto bytes = std::span<const std::uint8_t>(buffer.data(), static_cast<std::size_t>(n));
      if (wire::DecodeHeader(bytes, &header) != wire::DecodeError::kNone) continue;
      if (header.type != wire::MessageType::kCollect) continue;
      const std::uint32_t k = header.seq & kCollectSeqPacketMask;
      if ((header.flags & wire::kFlagRetransmission) != 0) ++resends[k];
      const Verdict verdict = decide(k, ++asked[k]);
      if (verdict.kind == Verdict::kDrop) continue;
      // One FIFO queue: an answer never overtakes one that is held.
      Clock::time_point at = clock.Now() + verdict.hold;
      if (!held.empty()) at = std::max(at, std::prev(held.end())->first);
      held.emplace(at, header.seq);
    }
  }
};

// One collector of epoch 0 (25 COLLECTs, all sent at once) against a
// scripted switch, on the switch's clock; returns its counters once the
// epoch is delivered.
HotCollectorCounters CollectAgainst(ScriptedSwitch& sw,
                                    std::function<Verdict(std::uint32_t, int)> decide,
                                    std::chrono::milliseconds timeout) {
  const auto hot_set = MakeHotSet();
  std::vector<hot::Key> owned;
  for (const hot::HotKey& key : hot_set->keys()) owned.push_back(key.key);
  std::sort(owned.begin(), owned.end());
  HotCollectorOptions options;
  options.job_id = kJobId;
  options.server_id = 0;
  options.switch_address = sw.socket.local();
  options.num_workers = 2;
  options.collect_by_row = true;
  options.written_keys_grace = 0ms;
  options.ready_poll = 10s;  // READY comes at once; no poll races it
  options.retry.initial_timeout = timeout;
  options.retry.min_timeout = timeout;  // the scripted clock's round trips are 0
  options.retry.max_timeout = timeout * 8;
  options.clock = &sw.clock;
  std::optional<CollectedEpoch> collected;
  std::mutex mutex;
  HotCollector collector(hot_set, owned, options, [&](CollectedEpoch epoch) {
    std::lock_guard lock(mutex);
    collected = std::move(epoch);
  });
  sw.Serve(
      collector.local(), std::move(decide),
      [&] {
        std::lock_guard lock(mutex);
        return collected.has_value();
      },
      [&] {
        const HotCollectorCounters c = collector.counters();
        return c.packets_sent == sw.received && c.packets_received == sw.sent;
      });
  std::lock_guard lock(mutex);
  EXPECT_TRUE(collected.has_value());
  if (collected) {
    EXPECT_EQ(collected->status, HotPathStatus::kOk);
  }
  const HotCollectorCounters counters = collector.counters();
  EXPECT_EQ(counters.collect_packets, 25u);
  return counters;
}

TEST(HotCollectorLoss, ALostResultIsResentOnceLaterOnesAreAnsweredNotAfterATimeout) {
  ScriptedSwitch sw;
  constexpr std::uint32_t kLost = 3;
  // The clock does not move while answers come: only loss detection by
  // order can resend.
  const HotCollectorCounters counters = CollectAgainst(
      sw,
      [](std::uint32_t k, int nth) {
        return Verdict{k == kLost && nth == 1 ? Verdict::kDrop : Verdict::kAnswer};
      },
      30s);
  EXPECT_EQ(counters.timeouts, 0u);
  EXPECT_EQ(counters.fast_retransmissions, 1u);
  EXPECT_EQ(counters.retransmissions, 1u);
  EXPECT_EQ(sw.asked[kLost], 2);
  EXPECT_EQ(sw.resends, (std::map<std::uint32_t, int>{{kLost, 1}}));
}

TEST(HotCollectorLoss, ALostTailCostsOneTimeoutAndOneResendOfEachLostPacket) {
  // The last five RESULTs are lost: no later answer shows it, so the timer
  // does; its resend of the oldest (20) is answered after the others would
  // have been, which shows 21-24 lost too.
  ScriptedSwitch sw;
  const HotCollectorCounters counters = CollectAgainst(
      sw,
      [](std::uint32_t k, int nth) {
        return Verdict{k >= 20 && nth == 1 ? Verdict::kDrop : Verdict::kAnswer};
      },
      50ms);
  EXPECT_EQ(counters.timeouts, 1u);
  EXPECT_EQ(counters.fast_retransmissions, 4u);
  EXPECT_EQ(counters.retransmissions, 5u);
  EXPECT_EQ(sw.resends,
            (std::map<std::uint32_t, int>{{20, 1}, {21, 1}, {22, 1}, {23, 1}, {24, 1}}));
}

TEST(HotCollectorLoss, ResultsQueuedPastTheTimeoutCostResendsOfTheOldestOnly) {
  // RESULTs 10-24 wait 400 ms (a loaded link) against a 20 ms timeout: each
  // expiry resends packet 10 alone (its answer queues behind the others),
  // never the whole window, and nothing is resent by order.
  ScriptedSwitch sw;
  const HotCollectorCounters counters = CollectAgainst(
      sw,
      [](std::uint32_t k, int nth) {
        return k >= 10 && nth == 1 ? Verdict{Verdict::kHold, 400ms} : Verdict{Verdict::kAnswer};
      },
      20ms);
  // Expiries at 20, 60, 140 and 300 ms (the timeout doubles, to at most
  // 160 ms); the held answers come at 400 ms, before the next one.
  EXPECT_EQ(counters.timeouts, 4u);
  EXPECT_EQ(counters.fast_retransmissions, 0u);
  EXPECT_EQ(sw.resends, (std::map<std::uint32_t, int>{{10, 4}}));
  EXPECT_EQ(counters.retransmissions, counters.timeouts);
}

}  // namespace
}  // namespace libra::hotpath

namespace libra::hotpath {
namespace {

// Server 0 owns every key of the hot set.
std::vector<hot::Key> AllKeysSorted(const hot::HotSet& hot_set) {
  std::vector<hot::Key> owned;
  for (const hot::HotKey& key : hot_set.keys()) owned.push_back(key.key);
  std::sort(owned.begin(), owned.end());
  return owned;
}

HotCollectorOptions ServerZeroOf(const UdpEndpoint& fake_switch) {
  HotCollectorOptions options;
  options.job_id = kJobId;
  options.server_id = 0;
  options.switch_address = fake_switch;
  return options;
}

// Once the switch has ACKed an epoch's LAST UPDATE, the collector sends
// `tail_copies` copies of it (flagged RETRANSMISSION, payload unchanged): a
// worker that lost the first REPLICA of the LAST still learns its stream is
// over. The copies' ACKs are expected, not ignored; nothing else is sent
// twice.
TEST(HotCollectorTail, TheLastUpdateOfAnEpochIsCopiedAfterItsAck) {
  const auto hot_set = MakeHotSet();
  const std::vector<hot::Key> owned = AllKeysSorted(*hot_set);
  net::UdpSocket fake_switch{UdpEndpoint{0x7f000001, 0}};
  HotCollectorOptions options = ServerZeroOf(fake_switch.local());
  options.retry.initial_timeout = 10s;  // no resend can come from a timer
  options.retry.min_timeout = 10s;
  options.retry.max_timeout = 10s;
  options.ready_poll = 10s;  // no READY poll either
  ASSERT_GT(options.tail_copies, 0u);
  HotCollector collector(hot_set, owned, options, [](CollectedEpoch) {});
  const std::vector<float> vals(owned.size(), 1.5f);
  collector.PublishUpdate(0, owned, vals);

  std::map<std::uint32_t, std::vector<std::uint8_t>> first;  // seq -> bytes
  std::vector<std::vector<std::uint8_t>> copies;
  std::optional<std::uint32_t> last_seq;
  std::array<std::uint8_t, wire::kMaxMessageBytes + 64> buffer{};
  const Clock::time_point give_up = Clock::now() + 10s;
  while (copies.size() < options.tail_copies && Clock::now() < give_up) {
    UdpEndpoint from;
    const int n = fake_switch.ReceiveFrom(buffer, &from, 50);
    if (n <= 0) continue;
    const std::vector<std::uint8_t> bytes(buffer.begin(), buffer.begin() + n);
    wire::Header header;
    ASSERT_EQ(wire::DecodeHeader(bytes, &header), wire::DecodeError::kNone);
    ASSERT_EQ(header.type, wire::MessageType::kUpdate);
    if ((header.flags & wire::kFlagRetransmission) != 0) {
      copies.push_back(bytes);
    } else {
      first[header.seq] = bytes;
      if ((header.flags & wire::kFlagLast) != 0) last_seq = header.seq;
    }
    // ACK it as the switch does: the header, type ACK, no slots.
    std::array<std::uint8_t, wire::kHeaderBytes> ack{};
    std::copy_n(bytes.begin(), ack.size(), ack.begin());
    wire::SetType(ack.data(), wire::MessageType::kAck);
    wire::SetFlags(ack.data(), 0);
    wire::SetSlotCount(ack.data(), 0);
    ASSERT_TRUE(fake_switch.SendTo(ack, from));
  }
  ASSERT_TRUE(last_seq.has_value());
  ASSERT_EQ(copies.size(), options.tail_copies);
  EXPECT_EQ(first.size(), *last_seq + 1) << "every UPDATE once";
  std::vector<std::uint8_t> expected = first.at(*last_seq);
  wire::SetFlags(expected.data(), wire::kFlagLast | wire::kFlagRetransmission);
  for (const std::vector<std::uint8_t>& copy : copies) EXPECT_EQ(copy, expected);

  // The copies' ACKs are taken as expected; nothing more is sent.
  testing::WaitFor([&] { return collector.counters().update_acks == first.size(); });
  UdpEndpoint from;
  EXPECT_EQ(fake_switch.ReceiveFrom(buffer, &from, 50), -1);
  const HotCollectorCounters counters = collector.counters();
  EXPECT_EQ(counters.update_tail_copies, options.tail_copies);
  EXPECT_EQ(counters.update_retransmissions, 0u);
  EXPECT_EQ(counters.ignored_packets, 0u);

  // A worker that lost some of the stream's REPLICAs gets the packets as
  // they were first sent: by number, and from a number on.
  auto as_string = [](const std::vector<std::uint8_t>& bytes) {
    return std::string(bytes.begin(), bytes.end());
  };
  const std::vector<std::uint32_t> hole = {0};
  EXPECT_EQ(collector.PublishedPackets(0, hole, kNoStreamTail),
            std::vector<std::string>{as_string(first.at(0))});
  EXPECT_EQ(collector.PublishedPackets(0, {}, *last_seq),
            std::vector<std::string>{as_string(first.at(*last_seq))});
  EXPECT_EQ(collector.PublishedPackets(0, hole, 0).size(), first.size()) << "each packet once";
  const std::vector<std::uint32_t> repeated(1000, 0);
  EXPECT_EQ(collector.PublishedPackets(0, repeated, kNoStreamTail).size(), 1u)
      << "a repeated number is answered once";
  EXPECT_TRUE(collector.PublishedPackets(1, hole, 0).empty()) << "epoch 1 was never published";
  EXPECT_EQ(collector.counters().repair_packets_answered, 3 + first.size());
}

// The UPDATE window bounds what is on the wire unACKed: with a window of 2,
// three published streams (a LAST each) go out two at first, then one more
// per ACK, in order.
TEST(HotCollectorUpdates, AtMostTheWindowIsUnackedAndEachAckLetsOneMoreGo) {
  const auto hot_set = MakeHotSet();
  const std::vector<hot::Key> owned = AllKeysSorted(*hot_set);
  net::UdpSocket fake_switch{UdpEndpoint{0x7f000001, 0}};
  HotCollectorOptions options = ServerZeroOf(fake_switch.local());
  options.update_window = 2;
  options.tail_copies = 0;
  options.retry.initial_timeout = 10s;  // no resend can come from a timer
  options.retry.min_timeout = 10s;
  options.retry.max_timeout = 10s;
  options.ready_poll = 10s;
  HotCollector collector(hot_set, owned, options, [](CollectedEpoch) {});
  EXPECT_EQ(collector.update_window(), 2u);
  const std::vector<hot::Key> one_key = {owned.front()};
  const std::vector<float> one_val = {1.5f};
  for (std::uint32_t epoch = 0; epoch < 3; ++epoch)
    collector.PublishUpdate(epoch, one_key, one_val);

  std::array<std::uint8_t, wire::kMaxMessageBytes + 64> buffer{};
  UdpEndpoint from;
  auto next_update = [&](int timeout_ms) -> std::optional<std::vector<std::uint8_t>> {
    const int n = fake_switch.ReceiveFrom(buffer, &from, timeout_ms);
    if (n <= 0) return std::nullopt;
    return std::vector<std::uint8_t>(buffer.begin(), buffer.begin() + n);
  };
  auto epoch_of = [](const std::vector<std::uint8_t>& bytes) {
    wire::Header header;
    EXPECT_EQ(wire::DecodeHeader(bytes, &header), wire::DecodeError::kNone);
    EXPECT_EQ(header.type, wire::MessageType::kUpdate);
    return header.epoch;
  };
  std::vector<std::vector<std::uint8_t>> sent;
  for (int i = 0; i < 2; ++i) {
    auto update = next_update(10000);
    ASSERT_TRUE(update.has_value());
    sent.push_back(*update);
  }
  EXPECT_EQ(epoch_of(sent[0]), 0u);
  EXPECT_EQ(epoch_of(sent[1]), 1u);
  EXPECT_FALSE(next_update(50).has_value()) << "a third waits for an ACK";

  std::array<std::uint8_t, wire::kHeaderBytes> ack{};
  std::copy_n(sent[0].begin(), ack.size(), ack.begin());
  wire::SetType(ack.data(), wire::MessageType::kAck);
  wire::SetFlags(ack.data(), 0);
  wire::SetSlotCount(ack.data(), 0);
  ASSERT_TRUE(fake_switch.SendTo(ack, from));
  auto third = next_update(10000);
  ASSERT_TRUE(third.has_value());
  EXPECT_EQ(epoch_of(*third), 2u);
  EXPECT_EQ(collector.counters().update_packets, 3u);
  EXPECT_EQ(collector.counters().update_retransmissions, 0u);
}

// A collector on a manual clock (retry timeout 20 ms, doubling to 160 ms)
// that published one UPDATE (one key, LAST) in each of `epochs` epochs, and
// the scripted switch it sends them to. Serve moves the clock only while
// nothing is in flight, in steps of 5 ms, so timers expire when the script
// says and every count is exact.
struct OneUpdateEpochs {
  std::shared_ptr<const hot::HotSet> hot_set = MakeHotSet();
  net::UdpSocket fake_switch{UdpEndpoint{0x7f000001, 0}};
  ManualEngineClock clock;
  std::unique_ptr<HotCollector> collector;

  explicit OneUpdateEpochs(std::uint32_t epochs) {
    const std::vector<hot::Key> owned = AllKeysSorted(*hot_set);
    HotCollectorOptions options = ServerZeroOf(fake_switch.local());
    options.clock = &clock;
    options.tail_copies = 0;
    options.retry.initial_timeout = 20ms;
    options.retry.min_timeout = 20ms;
    options.retry.max_timeout = 160ms;
    options.ready_poll = 10s;
    collector = std::make_unique<HotCollector>(hot_set, owned, options, [](CollectedEpoch) {});
    const std::vector<hot::Key> one_key = {owned.front()};
    const std::vector<float> one_val = {1.5f};
    for (std::uint32_t epoch = 0; epoch < epochs; ++epoch)
      collector->PublishUpdate(epoch, one_key, one_val);
  }

  // Hands every UPDATE the switch receives to `on_update` (its header and
  // bytes, and where it came from) until `done()` or `span` of the clock.
  void Serve(std::chrono::milliseconds span, const std::function<bool()>& done,
             const std::function<void(const wire::Header&, std::span<const std::uint8_t>,
                                      const UdpEndpoint&)>& on_update) {
    std::array<std::uint8_t, wire::kMaxMessageBytes + 64> buffer{};
    const Clock::time_point start = clock.Now();
    const Clock::time_point give_up = Clock::now() + 30s;
    while (!done() && clock.Now() - start < span && Clock::now() < give_up) {
      UdpEndpoint from;
      const int n = fake_switch.ReceiveFrom(buffer, &from, 5);
      if (n <= 0) {
        clock.Advance(5ms);  // quiet: the collector has sent what it will
        continue;
      }
      const std::span<const std::uint8_t> bytes(buffer.data(), static_cast<std::size_t>(n));
      wire::Header header;
      ASSERT_EQ(wire::DecodeHeader(bytes, &header), wire::DecodeError::kNone);
      ASSERT_EQ(header.type, wire::MessageType::kUpdate);
      on_update(header, bytes, from);
    }
  }
};

// When no ACK comes, each expiry resends the oldest UPDATE only and restarts
// every UPDATE's timer (the timeout doubling): the others may be waiting in
// a loaded queue behind it. Expiries at 20 and 60 ms; none other before 140.
TEST(HotCollectorUpdates, AnExpiryResendsTheOldestUpdateOnly) {
  OneUpdateEpochs run(3);
  std::map<std::uint32_t, int> first_sends, resends;  // by epoch
  run.Serve(
      100ms, [] { return false; },
      [&](const wire::Header& header, std::span<const std::uint8_t>, const UdpEndpoint&) {
        ++((header.flags & wire::kFlagRetransmission) != 0 ? resends : first_sends)[header.epoch];
      });
  EXPECT_EQ(first_sends, (std::map<std::uint32_t, int>{{0, 1}, {1, 1}, {2, 1}}));
  EXPECT_EQ(resends, (std::map<std::uint32_t, int>{{0, 2}}));
  EXPECT_EQ(run.collector->counters().update_retransmissions, 2u);
}

// UPDATEs lost in a run (a full queue drops a burst) are resent within a
// round trip of the first expiry, not one per expiry: the switch ACKs the
// expiry's resend flagged RETRANSMISSION, so the collector knows that
// resend got through and that the UPDATEs sent before it, still unACKed,
// were lost. The scripted switch drops every first send and ACKs every
// resend, echoing the flag, in arrival order. With the switch's old
// unflagged ACKs (an ACK of a resend showed nothing), each UPDATE waited
// for an expiry of its own.
TEST(HotCollectorUpdates, ARunOfLostUpdatesIsResentAfterOneExpiry) {
  constexpr std::uint32_t kEpochs = 6;
  OneUpdateEpochs run(kEpochs);
  std::map<std::uint32_t, int> first_sends, resends;  // by epoch
  const Clock::time_point start = run.clock.Now();
  run.Serve(
      500ms, [&] { return run.collector->counters().update_acks == kEpochs; },
      [&](const wire::Header& header, std::span<const std::uint8_t> bytes,
          const UdpEndpoint& from) {
        const bool resend = (header.flags & wire::kFlagRetransmission) != 0;
        ++(resend ? resends : first_sends)[header.epoch];
        if (!resend) return;  // lost
        std::array<std::uint8_t, wire::kHeaderBytes> ack{};
        std::copy_n(bytes.begin(), ack.size(), ack.begin());
        wire::SetType(ack.data(), wire::MessageType::kAck);
        wire::SetFlags(ack.data(), wire::kFlagRetransmission);
        wire::SetSlotCount(ack.data(), 0);
        ASSERT_TRUE(run.fake_switch.SendTo(ack, from));
      });
  const HotCollectorCounters counters = run.collector->counters();
  EXPECT_EQ(counters.update_acks, kEpochs);
  EXPECT_LT(run.clock.Now() - start, 40ms) << "one expiry (at 20 ms), no second";
  std::map<std::uint32_t, int> once;
  for (std::uint32_t epoch = 0; epoch < kEpochs; ++epoch) once[epoch] = 1;
  EXPECT_EQ(first_sends, once);
  EXPECT_EQ(resends, once) << "each lost UPDATE resent once";
  EXPECT_EQ(counters.update_retransmissions, kEpochs);
  EXPECT_EQ(counters.update_fast_retransmissions, kEpochs - 1) << "all but the expiry's by order";
}

// The window shrinks to what a worker's socket can queue, judged by the
// server's own (about twice a datagram's bytes each, in the kernel's
// accounting), and never below 16.
TEST(HotCollectorUpdates, TheWindowFitsWhatAWorkersSocketCanQueue) {
  const int packet_charge = static_cast<int>(2 * wire::kMaxMessageBytes);
  EXPECT_EQ(UpdateWindowFor(512, 64 << 20), 512u);
  EXPECT_EQ(UpdateWindowFor(512, 100 * packet_charge + 1), 100u);
  EXPECT_EQ(UpdateWindowFor(512, 0), 16u);
  EXPECT_EQ(UpdateWindowFor(8, 0), 8u) << "never more than asked for";

  auto small_queue = std::make_shared<net::UdpSocket>(
      UdpEndpoint{0x7f000001, 0},
      net::UdpSocketOptions{.buffer_bytes = 64 * packet_charge / 2, .non_blocking = true});
  const int queue = small_queue->ReceiveBufferBytes();
  ASSERT_GT(queue, 0);
  net::UdpSocket fake_switch{UdpEndpoint{0x7f000001, 0}};
  HotCollectorOptions options = ServerZeroOf(fake_switch.local());
  options.socket = small_queue;
  options.local = small_queue->local();
  const auto hot_set = MakeHotSet();
  HotCollector collector(hot_set, AllKeysSorted(*hot_set), options, [](CollectedEpoch) {});
  EXPECT_EQ(collector.update_window(), UpdateWindowFor(512, queue));
  EXPECT_LT(collector.update_window(), 512u);
}

// A lost READY costs a poll interval. While some worker has not said it
// pushes the epoch (WRITTEN_KEYS), that is ready_poll; once every one has,
// READY is due and the collector asks after a few round trips (2 ms here,
// with no round trip measured yet), on its own clock.
// Server 0 of two workers that waits `grace` for their WRITTEN_KEYS and
// polls for READY only after 10 s, on `clock`.
HotCollectorOptions TwoWorkersOf(const UdpEndpoint& fake_switch, ManualEngineClock* clock,
                                 std::chrono::milliseconds grace) {
  HotCollectorOptions options = ServerZeroOf(fake_switch);
  options.num_workers = 2;
  options.written_keys_grace = grace;
  options.ready_poll = 10s;
  options.clock = clock;
  return options;
}

TEST(HotCollectorTail, OnceEveryWorkerReportedTheEpochALostReadyIsAskedForSoon) {
  const auto hot_set = MakeHotSet();
  const std::vector<hot::Key> owned = AllKeysSorted(*hot_set);
  net::UdpSocket fake_switch{UdpEndpoint{0x7f000001, 0}};
  ManualEngineClock clock;
  HotCollector collector(hot_set, owned, TwoWorkersOf(fake_switch.local(), &clock, 50ms),
                         [](CollectedEpoch) {});
  const std::vector<std::uint32_t> first_key = {0};
  const std::vector<std::uint8_t> key_set =
      EncodeKeySet(first_key, static_cast<std::uint32_t>(owned.size()));
  auto next_poll = [&](int wait_ms) -> std::optional<wire::Header> {
    std::array<std::uint8_t, wire::kMaxMessageBytes + 64> buffer{};
    UdpEndpoint from;
    const int n = fake_switch.ReceiveFrom(buffer, &from, wait_ms);
    if (n <= 0) return std::nullopt;
    wire::Header header;
    EXPECT_EQ(wire::DecodeHeader(std::span(buffer.data(), static_cast<std::size_t>(n)), &header),
              wire::DecodeError::kNone);
    return header;
  };

  collector.AddWrittenKeys(0, 0, key_set);
  clock.Advance(5ms);
  EXPECT_FALSE(next_poll(100)) << "one worker of two has reported: ready_poll (10 s) holds";
  EXPECT_EQ(collector.counters().ready_polls, 0u);

  // The clock stands still from here: the last poll (the collector's start)
  // is 5 ms old, past the 2 ms interval but far from ready_poll, so exactly
  // one poll goes out, whenever the engine thread gets to the report.
  collector.AddWrittenKeys(0, 1, key_set);
  const std::optional<wire::Header> poll = next_poll(5000);
  ASSERT_TRUE(poll);
  EXPECT_EQ(poll->type, wire::MessageType::kCollect);
  EXPECT_EQ(poll->epoch, 0u);
  EXPECT_EQ(poll->seq & kCollectSeqPacketMask, kCollectPollPacket);
  EXPECT_EQ(collector.counters().ready_polls, 1u);
}

// The COLLECTs are planned when the last worker's report of the epoch comes,
// before READY, and planned again if a report of it comes after that: what
// goes out at READY reads exactly the cells of every key reported.
TEST(HotCollectorPlan, TheCollectsAtReadyReadEveryReportedKeyEvenOneReportedAfterThePlan) {
  const auto hot_set = MakeHotSet();
  const std::vector<hot::Key> owned = AllKeysSorted(*hot_set);
  net::UdpSocket fake_switch{UdpEndpoint{0x7f000001, 0}};
  ManualEngineClock clock;  // stands still: no poll, no timeout
  HotCollector collector(hot_set, owned, TwoWorkersOf(fake_switch.local(), &clock, 5s),
                         [](CollectedEpoch) {});
  const auto universe = static_cast<std::uint32_t>(owned.size());
  collector.AddWrittenKeys(0, 0, EncodeKeySet(std::vector<std::uint32_t>{0}, universe));
  collector.AddWrittenKeys(0, 1, EncodeKeySet(std::vector<std::uint32_t>{1}, universe));
  // Worker 1 again, with one more key (a repeated report is merged).
  collector.AddWrittenKeys(0, 1, EncodeKeySet(std::vector<std::uint32_t>{1, 5}, universe));

  wire::Header ready;
  ready.type = wire::MessageType::kReady;
  ready.job_id = kJobId;
  std::array<std::uint8_t, wire::kHeaderBytes> ready_bytes{};
  ASSERT_EQ(wire::Encode(ready, {}, ready_bytes), ready_bytes.size());
  ASSERT_TRUE(fake_switch.SendTo(ready_bytes, collector.local()));

  std::set<std::pair<std::uint32_t, std::uint32_t>> want, asked;  // (array, cell)
  for (const std::uint32_t i : {0u, 1u, 5u}) {
    for (const hot::CellAddress& cell : hot_set->CellsOf(hot_set->Lookup(owned[i]))) {
      want.insert({cell.array, cell.index});
    }
  }
  std::array<std::uint8_t, wire::kMaxMessageBytes + 64> buffer{};
  while (asked.size() < want.size()) {
    UdpEndpoint from;
    const int n = fake_switch.ReceiveFrom(buffer, &from, 5000);
    ASSERT_GT(n, 0) << "asked for " << asked.size() << " of " << want.size() << " cells";
    wire::Message message;
    ASSERT_EQ(wire::Decode(std::span(buffer.data(), static_cast<std::size_t>(n)), &message),
              wire::DecodeError::kNone);
    ASSERT_EQ(message.header.type, wire::MessageType::kCollect);
    ASSERT_NE(message.header.seq & kCollectSeqPacketMask, kCollectPollPacket);
    for (std::uint32_t j = 0; j < message.header.slot_count; ++j) {
      if (message.slots[j].valid) asked.insert({j, message.slots[j].index});
    }
  }
  EXPECT_EQ(asked, want);
  EXPECT_EQ(collector.counters().epochs_by_written_keys, 1u);
}

}  // namespace
}  // namespace libra::hotpath
