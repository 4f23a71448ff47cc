// HotSender against a scripted switch on loopback (a UDP socket of the
// test): which DATA and FIN it resends, and when, if an ACK is lost; when it
// gives up on a silent switch; when it reports a replica gap; and that it
// takes answers only from the switch's address.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "hot/placement.h"
#include "hotpath/messages/hot_packets.h"
#include "hotpath/messages/update_auth.h"
#include "hotpath/node/engine_clock.h"
#include "hotpath/small_hot_set.h"
#include "hotpath/wait_for.h"
#include "hotpath/worker/hot_sender.h"
#include "net/udp_socket.h"
#include "wire/wire.h"

namespace libra::hotpath {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::WaitFor;

constexpr std::uint32_t kJobId = 5;
constexpr std::uint16_t kWorker = 1;
constexpr std::uint32_t kPackets = 25;

// 200 one-value keys in 8 arrays: a push of all of them is 25 DATA packets.
std::shared_ptr<const hot::HotSet> MakeHotSet() { return testing::TwentyFiveRowHotSet(); }

// What the scripted switch does with a DATA (seq) or a FIN (kFin), the nth
// time it comes: answer it with its ACK, or drop it.
constexpr std::uint32_t kFin = ~0u;
using Decide = std::function<bool(std::uint32_t packet, int nth)>;

// The switch's side: ACKs as `decide` says, in the order the packets came
// (one FIFO path). As the switch does, it drops a FIN that comes before
// every DATA of the push has (`fin_mismatches`). It keeps the sender's clock (a ManualEngineClock):
// time moves only while nothing is in flight either way (`quiet`), in steps of kStep, so a timer
// expires when the script says and never because the machine was slow, and the counts below are
// exact.
struct ScriptedSwitch {
  static constexpr auto kStep = 5ms;
  net::UdpSocket socket{UdpEndpoint{0x7f000001, 0}};
  ManualEngineClock clock;
  std::map<std::uint32_t, int> asked;    // DATA (seq) and FIN (kFin) received
  std::map<std::uint32_t, int> resends;  // ... of them flagged RETRANSMISSION
  std::uint64_t received = 0, sent = 0;  // datagrams
  int fin_mismatches = 0;
  // A queue in front of the switch: first sends wait in it, unACKed, until
  // a resend comes behind them (then all are ACKed in the order they came).
  bool hold_first_sends = false;
  std::vector<wire::Header> held;

  // Whether a FIN counting `count` DATA finds all of them seen.
  bool SawAllData(std::uint32_t count) {
    for (std::uint32_t seq = 0; seq < count; ++seq) {
      if (asked[seq] == 0) return false;
    }
    return true;
  }

  // A packet that reached the switch: ACKed as `decide` says.
  void Take(const wire::Header& header, const Decide& decide, const UdpEndpoint& sender) {
    const bool fin = header.type == wire::MessageType::kFin;
    const std::uint32_t packet = fin ? kFin : header.seq;
    if (fin && !SawAllData(header.seq)) {
      ++fin_mismatches;
      return;
    }
    const int nth = ++asked[packet];
    if (decide(packet, nth)) Ack(header, nth > 1, sender);
  }

  void Ack(const wire::Header& to_ack, bool duplicate, const UdpEndpoint& to) {
    wire::Header ack;
    ack.type = wire::MessageType::kAck;
    ack.job_id = kJobId;
    ack.node_id = to_ack.node_id;
    ack.epoch = to_ack.epoch;
    ack.seq = to_ack.seq;
    // As the switch does: a DATA added has its RETRANSMISSION flag echoed.
    const bool data = to_ack.type == wire::MessageType::kData;
    ack.flags = static_cast<std::uint16_t>(
        (data ? 0 : wire::kFlagFin) | (duplicate ? wire::kFlagDuplicate : 0) |
        (data && !duplicate ? to_ack.flags & wire::kFlagRetransmission : 0));
    std::array<std::uint8_t, wire::kHeaderBytes> bytes{};
    ASSERT_EQ(wire::Encode(ack, {}, bytes), bytes.size());
    ASSERT_TRUE(socket.SendTo(bytes, to));
    ++sent;
  }

  // Serves until `done()`, or 30 s of real time (a broken sender).
  void Serve(const UdpEndpoint& sender, const Decide& decide, const std::function<bool()>& done,
             const std::function<bool()>& quiet) {
    std::array<std::uint8_t, wire::kMaxMessageBytes + 64> buffer{};
    const Clock::time_point give_up = Clock::now() + 30s;
    while (!done() && Clock::now() < give_up) {
      UdpEndpoint from;
      const int n = socket.ReceiveFrom(buffer, &from, 5);
      if (n <= 0) {
        if (quiet()) clock.Advance(kStep);
        continue;
      }
      ++received;
      wire::Header header;
      const auto bytes = std::span<const std::uint8_t>(buffer.data(), static_cast<std::size_t>(n));
      if (wire::DecodeHeader(bytes, &header) != wire::DecodeError::kNone) continue;
      if (header.type != wire::MessageType::kData && header.type != wire::MessageType::kFin) {
        continue;
      }
      const std::uint32_t packet = header.type == wire::MessageType::kFin ? kFin : header.seq;
      const bool resend = (header.flags & wire::kFlagRetransmission) != 0;
      if (resend) ++resends[packet];
      if (hold_first_sends && !resend) {
        held.push_back(header);
        continue;
      }
      for (const wire::Header& late : held) Take(late, decide, sender);
      held.clear();
      Take(header, decide, sender);
    }
  }
};

// `key`: what the REPLICAs are signed with.
HotSenderOptions Options(ScriptedSwitch& sw, std::chrono::milliseconds timeout,
                         const UpdateKey& key = {}) {
  HotSenderOptions options;
  options.update_key = key;
  options.job_id = kJobId;
  options.worker_id = kWorker;
  options.switch_address = sw.socket.local();
  options.retry.initial_timeout = timeout;
  options.retry.min_timeout = timeout;  // the scripted clock's round trips are 0
  options.retry.max_timeout = timeout * 8;
  options.retry.max_retries = 8;
  options.replica_gap_timeout = 10s;
  options.clock = &sw.clock;
  return options;
}

std::vector<hot::Key> AllKeys(const hot::HotSet& set) {
  std::vector<hot::Key> keys;
  for (const hot::HotKey& key : set.keys()) keys.push_back(key.key);
  return keys;
}

struct Outcome {
  HotPathStatus status = HotPathStatus::kShutdown;
  HotSenderCounters counters;
};

// Pushes epoch 0 (every key: 25 DATA) against the scripted switch and serves
// until the push ends and the sender has read every answer.
Outcome PushAgainst(ScriptedSwitch& sw, HotSender& sender, const Decide& decide) {
  const auto hot_set = MakeHotSet();
  const std::vector<hot::Key> keys = AllKeys(*hot_set);
  const std::vector<float> vals(keys.size(), 0.5f);
  const std::shared_future<HotPathStatus> done = sender.Push(0, keys, vals);
  sw.Serve(
      sender.local(), decide, [&] { return done.wait_for(0s) == std::future_status::ready; },
      [&] {
        const HotSenderCounters c = sender.counters();
        return c.packets_sent == sw.received && c.packets_received == sw.sent;
      });
  // ACKs still on their way when the FIN's ACK ended the push are counted.
  WaitFor([&] { return sender.counters().packets_received == sw.sent; });
  Outcome outcome;
  EXPECT_EQ(done.wait_for(0s), std::future_status::ready);
  if (done.wait_for(0s) == std::future_status::ready) outcome.status = done.get();
  outcome.counters = sender.counters();
  EXPECT_EQ(outcome.counters.data_packets, kPackets);
  return outcome;
}

// A push's first DATA lost on the way never reached the switch: its resend
// is the copy added.
Decide LoseFirstSendsOf(ScriptedSwitch& sw, std::function<bool(std::uint32_t)> lost) {
  return [&sw, lost](std::uint32_t packet, int) {
    if (packet != kFin && lost(packet) && sw.resends[packet] == 0) {
      --sw.asked[packet];
      return false;
    }
    return true;
  };
}

TEST(HotSenderLoss, ALostDataIsResentOnceLaterOnesAreAckedAndTheFinAgainAtOnce) {
  ScriptedSwitch sw;
  HotSender sender(MakeHotSet(), Options(sw, 30s));
  constexpr std::uint32_t kLost = 3;
  // The timeout is far beyond anything the clock reaches: only loss
  // detection by order can resend the DATA, and only its ACK the FIN that
  // the switch dropped for counting a DATA it never saw.
  const Outcome outcome =
      PushAgainst(sw, sender, LoseFirstSendsOf(sw, [](std::uint32_t p) { return p == kLost; }));
  EXPECT_EQ(outcome.status, HotPathStatus::kOk);
  EXPECT_EQ(outcome.counters.timeouts, 0u);
  EXPECT_EQ(outcome.counters.fast_retransmissions, 1u);
  EXPECT_EQ(outcome.counters.retransmissions, 2u);  // the DATA and the FIN
  EXPECT_EQ(outcome.counters.fin_packets, 1u);
  EXPECT_EQ(outcome.counters.epochs_acked, 1u);
  EXPECT_EQ(sw.fin_mismatches, 1);
  EXPECT_EQ(sw.resends, (std::map<std::uint32_t, int>{{kLost, 1}, {kFin, 1}}));
}

TEST(HotSenderLoss, TheFinGoesBehindTheLastDataAndItsAckEndsThePushDespiteLostAcks) {
  // The ACKs of the last five DATA are lost, not the DATA: the FIN, sent
  // right behind them, finds all 25 seen, and its ACK ends the push before
  // any timer resends a packet.
  ScriptedSwitch sw;
  HotSender sender(MakeHotSet(), Options(sw, 30s));
  const Outcome outcome = PushAgainst(sw, sender, [](std::uint32_t packet, int nth) {
    return packet == kFin || packet < 20 || nth > 1;
  });
  EXPECT_EQ(outcome.status, HotPathStatus::kOk);
  EXPECT_EQ(outcome.counters.timeouts, 0u);
  EXPECT_EQ(outcome.counters.retransmissions, 0u);
  EXPECT_EQ(outcome.counters.fin_packets, 1u);
  EXPECT_EQ(outcome.counters.epochs_acked, 1u);
  EXPECT_EQ(outcome.counters.acks, 21u);  // 20 DATA and the FIN
  EXPECT_EQ(sw.fin_mismatches, 0);
  EXPECT_TRUE(sw.resends.empty());
}

TEST(HotSenderLoss, ALostTailOfDataCostsOneTimeoutAndOneResendOfEachLostPacket) {
  // The last five DATA are lost, not their ACKs, and the switch drops the
  // FIN behind them: no later ACK shows it, so the timer does. Its one
  // expiry resends packet 20, the copy the switch adds (it echoes
  // RETRANSMISSION), so 21-24, sent before it, are lost by order; once they
  // are ACKed the FIN goes again.
  ScriptedSwitch sw;
  HotSender sender(MakeHotSet(), Options(sw, 50ms));
  const Outcome outcome =
      PushAgainst(sw, sender, LoseFirstSendsOf(sw, [](std::uint32_t p) { return p >= 20; }));
  EXPECT_EQ(outcome.status, HotPathStatus::kOk);
  EXPECT_EQ(outcome.counters.timeouts, 1u);
  EXPECT_EQ(outcome.counters.fast_retransmissions, 4u);
  EXPECT_EQ(outcome.counters.retransmissions, 6u);  // five DATA and the FIN
  EXPECT_EQ(outcome.counters.late_first_sends, 0u);
  EXPECT_EQ(outcome.counters.duplicate_acks, 0u);
  EXPECT_EQ(sw.fin_mismatches, 1);
  EXPECT_EQ(sw.resends,
            (std::map<std::uint32_t, int>{{20, 1}, {21, 1}, {22, 1}, {23, 1}, {24, 1}, {kFin, 1}}));
}

TEST(HotSenderLoss, LateDataCostOneResendNotAResendOfEveryTimedOutPacket) {
  // A queue holds every DATA past the timeout (a shaped link that a cold
  // push filled). The expiry resends packet 0 alone; the switch then adds
  // the first sends, late, and ACKs the resend as a duplicate: nothing else
  // is resent, and the late first send is counted.
  ScriptedSwitch sw;
  sw.hold_first_sends = true;
  HotSender sender(MakeHotSet(), Options(sw, 50ms));
  const Outcome outcome = PushAgainst(sw, sender, [&sw](std::uint32_t packet, int) {
    if (packet == 0) sw.hold_first_sends = false;  // the queue drains behind the resend
    return true;
  });
  EXPECT_EQ(outcome.status, HotPathStatus::kOk);
  EXPECT_EQ(outcome.counters.timeouts, 1u);
  EXPECT_EQ(outcome.counters.retransmissions, 1u);
  EXPECT_EQ(outcome.counters.fast_retransmissions, 0u);
  EXPECT_EQ(outcome.counters.late_first_sends, 1u);
  EXPECT_EQ(outcome.counters.duplicate_acks, 1u);
  EXPECT_EQ(sw.resends, (std::map<std::uint32_t, int>{{0, 1}}));
}

TEST(HotSenderLoss, ALostFinAckCostsOneTimeoutAndOneResentFin) {
  ScriptedSwitch sw;
  HotSender sender(MakeHotSet(), Options(sw, 50ms));
  const Outcome outcome = PushAgainst(
      sw, sender, [](std::uint32_t packet, int nth) { return packet != kFin || nth > 1; });
  EXPECT_EQ(outcome.status, HotPathStatus::kOk);
  EXPECT_EQ(outcome.counters.timeouts, 1u);
  EXPECT_EQ(outcome.counters.retransmissions, 1u);
  EXPECT_EQ(outcome.counters.fin_packets, 1u);
  EXPECT_EQ(outcome.counters.duplicate_acks, 1u);  // the switch ACKs a repeated FIN as one
  EXPECT_EQ(sw.resends, (std::map<std::uint32_t, int>{{kFin, 1}}));
}

TEST(HotSenderLoss, ASilentSwitchFailsThePushOnceTheRetriesAreSpent) {
  // 8 retries from 5 ms, doubling to at most 40 ms: expiries at 5, 15, 35,
  // 75, 115, ... ms; the ninth reports the switch unresponsive, no sooner
  // than 5+10+20+40+5x40 = 275 ms of the sender's clock after the first send.
  ScriptedSwitch sw;
  HotSender sender(MakeHotSet(), Options(sw, 5ms));
  const Clock::time_point start = sw.clock.Now();
  std::mutex mutex;
  std::vector<std::uint32_t> reported;
  Clock::time_point reported_at;
  sender.OnSwitchUnresponsive([&](std::uint32_t epoch) {
    std::lock_guard lock(mutex);
    reported.push_back(epoch);
    reported_at = sw.clock.Now();
  });
  const Outcome outcome = PushAgainst(sw, sender, [](std::uint32_t, int) { return false; });
  EXPECT_EQ(outcome.status, HotPathStatus::kSwitchUnresponsive);
  EXPECT_EQ(outcome.counters.timeouts, 9u);
  EXPECT_EQ(outcome.counters.retransmissions, 8u);  // the lowest DATA on each retry
  EXPECT_EQ(outcome.counters.fast_retransmissions, 0u);
  EXPECT_EQ(outcome.counters.epochs_failed, 1u);
  EXPECT_EQ(outcome.counters.fin_packets, 1u);  // right behind the DATA, never again
  EXPECT_EQ(sw.resends, (std::map<std::uint32_t, int>{{0, 8}}));
  {
    std::lock_guard lock(mutex);
    EXPECT_EQ(reported, std::vector<std::uint32_t>{0});
    EXPECT_GE(reported_at - start, 275ms);
  }
  // The values stay for the fallback; a later push fails at once.
  ASSERT_TRUE(sender.Retained(0).has_value());
  EXPECT_EQ(sender.Retained(0)->keys.size(), 200u);
  const auto keys = AllKeys(*MakeHotSet());
  EXPECT_EQ(sender.Push(1, keys, std::vector<float>(keys.size(), 1.0f)).get(),
            HotPathStatus::kSwitchUnresponsive);
  EXPECT_EQ(sender.counters().epochs_failed, 2u);
}

// Server 0's REPLICAs of epoch 0 carrying `vals` for `keys`, the last
// flagged LAST, signed with `key`, typed as the switch rewrites them.
std::vector<EncodedPacket> Replicas(const hot::HotSet& set, const std::vector<hot::Key>& keys,
                                    const std::vector<float>& vals, const UpdateKey& key) {
  wire::Header header;
  header.type = wire::MessageType::kUpdate;
  header.job_id = kJobId;
  header.node_id = 0;
  header.epoch = 0;
  std::vector<EncodedPacket> packets =
      PackUpdate(set, header, keys, CheckHotValues(set, keys, vals, {}), vals);
  packets.back().SetFlags(wire::kFlagLast);
  for (EncodedPacket& packet : packets) {
    SignUpdate(key, std::span(packet.bytes.data(), packet.length));
    wire::SetType(packet.bytes.data(), wire::MessageType::kReplica);
  }
  return packets;
}

// Epoch 0 pushed and ACKed by `sw`; `replicas`: server 0's REPLICAs of it,
// every hot key at 2.
void PushEpochZero(ScriptedSwitch& sw, HotSender& sender, const hot::HotSet& hot_set,
                   const UpdateKey& key, std::vector<EncodedPacket>* replicas) {
  ASSERT_EQ(PushAgainst(sw, sender, [](std::uint32_t, int) { return true; }).status,
            HotPathStatus::kOk);
  const std::vector<hot::Key> keys = AllKeys(hot_set);
  *replicas = Replicas(hot_set, keys, std::vector<float>(keys.size(), 2.0f), key);
}

TEST(HotSenderLoss, AStreamWhoseTailIsLostIsReportedOnceAfterTheGapTimeout) {
  // Epoch 0 is pushed and ACKed; the first of server 0's REPLICAs of it
  // arrives, the rest never do. Nothing shows the loss by order, so the gap
  // is reported replica_gap_timeout (of the sender's clock) after that
  // REPLICA, once, with the keys still missing.
  ScriptedSwitch sw;
  const auto hot_set = MakeHotSet();
  const UpdateKey key = NewUpdateKey();
  HotSenderOptions options = Options(sw, 30s, key);
  options.replica_gap_timeout = 100ms;
  HotSender sender(hot_set, options);
  std::mutex mutex;
  std::vector<ReplicaGap> gaps;
  Clock::time_point reported_at;
  sender.OnReplicaGap([&](const ReplicaGap& gap) {
    std::lock_guard lock(mutex);
    gaps.push_back(gap);
    reported_at = sw.clock.Now();
  });
  const std::vector<hot::Key> keys = AllKeys(*hot_set);
  std::vector<EncodedPacket> replicas;
  PushEpochZero(sw, sender, *hot_set, key, &replicas);
  ASSERT_GT(replicas.size(), 1u);
  const std::uint64_t received = sender.counters().packets_received;
  ASSERT_TRUE(sw.socket.SendTo(replicas[0].view(), sender.local()));
  WaitFor([&] { return sender.counters().packets_received == received + 1; });
  const Clock::time_point arrived = sw.clock.Now();
  const Clock::time_point give_up = Clock::now() + 30s;
  for (;;) {
    {
      std::lock_guard lock(mutex);
      if (!gaps.empty() || Clock::now() > give_up) break;
    }
    // Nothing is in flight: only the clock moves the sender.
    std::this_thread::sleep_for(2ms);
    sw.clock.Advance(ScriptedSwitch::kStep);
  }
  // Ten more steps: no second report.
  for (int i = 0; i < 10; ++i) {
    std::this_thread::sleep_for(2ms);
    sw.clock.Advance(ScriptedSwitch::kStep);
  }
  const HotSenderCounters counters = sender.counters();
  EXPECT_EQ(counters.replica_packets, 1u);
  EXPECT_EQ(counters.replica_holes_by_order, 0u);
  EXPECT_EQ(counters.replica_gaps, 1u);
  std::lock_guard lock(mutex);
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_EQ(gaps[0].epoch, 0u);
  EXPECT_EQ(gaps[0].keys, keys);  // server 0 is behind: all of its keys
  EXPECT_GE(reported_at - arrived, 100ms);
}

TEST(HotSenderLoss, AHoleThatOrderShowsIsReportedAtOnceNamingTheLostPacket) {
  // Every REPLICA of server 0's stream but the first arrives, the LAST
  // among them: order shows the hole, and the gap is reported without the
  // sender's clock moving (replica_order_grace is 0), naming packet 0.
  ScriptedSwitch sw;
  const auto hot_set = MakeHotSet();
  const UpdateKey key = NewUpdateKey();
  HotSenderOptions options = Options(sw, 30s, key);
  HotSender sender(hot_set, options);
  std::mutex mutex;
  std::vector<ReplicaGap> gaps;
  sender.OnReplicaGap([&](const ReplicaGap& gap) {
    std::lock_guard lock(mutex);
    gaps.push_back(gap);
  });
  const std::vector<hot::Key> keys = AllKeys(*hot_set);
  std::vector<EncodedPacket> replicas;
  PushEpochZero(sw, sender, *hot_set, key, &replicas);
  ASSERT_GT(replicas.size(), 1u);
  const Clock::time_point before = sw.clock.Now();
  for (std::size_t i = 1; i < replicas.size(); ++i) {
    ASSERT_TRUE(sw.socket.SendTo(replicas[i].view(), sender.local()));
  }
  WaitFor([&] {
    std::lock_guard lock(mutex);
    return !gaps.empty();
  });
  EXPECT_EQ(sw.clock.Now(), before);
  const HotSenderCounters counters = sender.counters();
  EXPECT_EQ(counters.replica_holes_by_order, 1u);
  EXPECT_EQ(counters.replica_gaps, 1u);
  std::lock_guard lock(mutex);
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_EQ(gaps[0].epoch, 0u);
  ASSERT_EQ(gaps[0].streams.size(), 1u);
  EXPECT_EQ(gaps[0].streams[0].seqs, std::vector<std::uint32_t>{0});
}

TEST(HotSenderForeign, AnswersFromAnotherAddressAreDroppedAndCountedAndChangeNothing) {
  // An ACK of every DATA and of the FIN, a REPLICA and a PROBE_REPLY, all of
  // this job and well formed (the REPLICA signed with the job's key), from a
  // socket that is not the switch: counted foreign, nothing ACKed, nothing
  // replicated; the real switch's answers then complete the push.
  ScriptedSwitch sw;
  const auto hot_set = MakeHotSet();
  const UpdateKey key = NewUpdateKey();
  HotSender sender(hot_set, Options(sw, 30s, key));
  const std::vector<hot::Key> keys = AllKeys(*hot_set);
  const std::shared_future<HotPathStatus> done =
      sender.Push(0, keys, std::vector<float>(keys.size(), 0.5f));
  WaitFor([&] { return sender.counters().packets_sent == kPackets + 1; });  // and the FIN

  net::UdpSocket intruder(UdpEndpoint{0x7f000001, 0});
  std::uint64_t forged = 0;
  auto send = [&](std::span<const std::uint8_t> bytes) {
    ASSERT_TRUE(intruder.SendTo(bytes, sender.local()));
    ++forged;
  };
  std::array<std::uint8_t, wire::kHeaderBytes> bytes{};
  wire::Header header;
  header.job_id = kJobId;
  header.node_id = kWorker;
  header.epoch = 0;
  header.type = wire::MessageType::kAck;
  for (std::uint32_t seq = 0; seq < kPackets; ++seq) {
    header.seq = seq;
    wire::Encode(header, {}, bytes);
    send(bytes);
  }
  header.seq = kPackets;
  header.flags = wire::kFlagFin;
  wire::Encode(header, {}, bytes);
  send(bytes);
  header.type = wire::MessageType::kProbeReply;
  header.flags = 0;
  header.seq = 1;
  wire::Encode(header, {}, bytes);
  send(bytes);
  for (const EncodedPacket& replica :
       Replicas(*hot_set, keys, std::vector<float>(keys.size(), 9.0f), key)) {
    send(replica.view());
  }
  WaitFor([&] { return sender.counters().packets_received == forged; });
  HotSenderCounters counters = sender.counters();
  EXPECT_EQ(counters.foreign_packets, forged);
  EXPECT_EQ(counters.acks, 0u);
  EXPECT_EQ(counters.replica_packets, 0u);
  EXPECT_EQ(counters.replica_values, 0u);
  EXPECT_EQ(counters.ignored_packets, 0u);
  EXPECT_EQ(counters.malformed_packets, 0u);
  EXPECT_EQ(done.wait_for(0s), std::future_status::timeout);
  EXPECT_FALSE(sender.ReplicaEpoch().has_value());

  // The switch's own ACKs (of what the sender sent, and of its FIN).
  sw.Serve(
      sender.local(), [](std::uint32_t, int) { return true; },
      [&] { return done.wait_for(0s) == std::future_status::ready; }, [] { return false; });
  ASSERT_EQ(done.wait_for(0s), std::future_status::ready);
  EXPECT_EQ(done.get(), HotPathStatus::kOk);
  counters = sender.counters();
  EXPECT_EQ(counters.acks, kPackets + 1);
  EXPECT_EQ(counters.retransmissions, 0u);
  EXPECT_EQ(counters.foreign_packets, forged);
}

}  // namespace
}  // namespace libra::hotpath
