// Fuzzes the hot path's receive side end to end: the datagrams of the input
// (fuzz_records.h) are sent over loopback, one at a time, to a real
// HotSender (the worker: ACK and REPLICA handling) and a real HotCollector
// (the server: READY and RESULT handling), exactly as the switch would send
// them. Bit 0 of the first byte makes the worker push epoch 0 first, so that
// ACKs meet DATA in flight; bit 1 makes the harness sign every UPDATE or
// REPLICA it sends under the worker's key (update_auth.h), so that they get
// past its check, which a mutated tag almost never does: unsigned, each is
// a forgery the worker must drop and count (forged_replicas) untouched. Retries, polls and gap
// reports are pushed out of reach, which makes each engine a deterministic function of the
// datagrams. Invariants: every datagram is received and classified exactly as a plain model of the
// protocol says (malformed, ignored, ACK, REPLICA, READY, RESULT, duplicate, NOT_READY...); the
// worker's replica (two servers splitting the keys, fuzz_replica_model.h) moves, completes streams
// and reaches ReplicaEpoch as the model says; the collector accepts a compacted RESULT only when
// its written mask names COLLECT slots that were asked and hold a value, and every epoch it
// delivers carries exactly the keys those RESULTs wrote, with their values and saturation.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "fuzz_hot_fixture.h"
#include "fuzz_records.h"
#include "fuzz_replica_model.h"
#include "hotpath/messages/hot_packets.h"
#include "hotpath/messages/update_auth.h"
#include "hotpath/server/hot_collector.h"
#include "hotpath/worker/hot_sender.h"
#include "wire/fixed_point.h"
#include "wire/wire.h"

namespace {

using namespace libra;
using namespace std::chrono_literals;

constexpr int kScaleBits = 16;  // the collector's fixed point: RESULT words to float32

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz_hotpath_receive: invariant broken: %s\n", what);
    std::abort();
  }
}

// Longer than any input takes: no retransmission, poll or gap report fires.
constexpr auto kNever = std::chrono::seconds(100);
// The receive buffer of the engines: a longer datagram arrives cut to this.
constexpr std::size_t kReceivedBytes = wire::kMaxMessageBytes + 64;

// The switch's side of the conversation: a UDP socket the engines send to
// and the fuzz datagrams come from.
class FakeSwitch {
 public:
  FakeSwitch() {
    fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    Check(fd_ >= 0 && ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), len) == 0 &&
              ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0,
          "fake switch socket");
    endpoint_ = {INADDR_LOOPBACK, ntohs(addr.sin_port)};
  }
  UdpEndpoint endpoint() const { return endpoint_; }
  void SendTo(const UdpEndpoint& to, std::span<const std::uint8_t> bytes) const {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(to.ipv4);
    addr.sin_port = htons(to.port);
    Check(::sendto(fd_, bytes.data(), bytes.size(), 0, reinterpret_cast<sockaddr*>(&addr),
                   sizeof(addr)) == static_cast<ssize_t>(bytes.size()),
          "sendto");
  }
  // Throws away what the engines sent (DATA, FIN, COLLECT).
  void Drain() const {
    std::uint8_t buffer[2048];
    while (::recv(fd_, buffer, sizeof(buffer), 0) > 0) {
    }
  }

 private:
  int fd_ = -1;
  UdpEndpoint endpoint_;
};

template <typename Predicate>
void WaitFor(Predicate done, const char* what) {
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!done()) {
    Check(std::chrono::steady_clock::now() < deadline, what);
    std::this_thread::sleep_for(20us);
  }
}

// The worker as the protocol describes it.
struct SenderModel {
  std::uint64_t forged_replicas = 0;  // REPLICAs whose tag does not verify
  bool pushed = false;
  std::uint32_t packets = 0;
  // The FIN goes right behind the DATA (they fit the window), and its ACK
  // alone ends the push: the switch ACKs it only having seen every DATA.
  bool fin_sent = false, fin_acked = false;
  std::uint64_t acks = 0, duplicate_acks = 0, replica_packets = 0;
  std::uint64_t replica_values = 0, stale_values = 0, replica_epochs = 0;
  std::uint64_t malformed = 0, ignored = 0;

  void OnAck(const wire::Header& h) {
    ++acks;
    if ((h.flags & wire::kFlagDuplicate) != 0) ++duplicate_acks;
    if (!pushed || fin_acked || h.epoch != 0) return;
    if ((h.flags & wire::kFlagFin) != 0) fin_acked = fin_sent && h.seq == packets;
  }
};

struct CollectorModel {
  std::uint32_t next_epoch = 0;
  // The newest epoch a READY (or a poll's answer) said complete: the
  // collector reads next_epoch only once it is (its RESULTs before are
  // duplicates); a NOT_READY before any RESULT of it took that back.
  std::optional<std::uint32_t> ready_upto;
  bool collecting() const { return ready_upto && *ready_upto >= next_epoch; }
  std::vector<bool> answered;
  std::uint32_t answered_count = 0;
  std::vector<std::uint32_t> bits;       // per value, a RESULT's word; 0 where nothing was written
  std::vector<bool> written, saturated;  // per key
  std::uint64_t ready = 0, results = 0, duplicates = 0, not_ready = 0, malformed = 0;
  std::uint64_t ignored = 0, written_values = 0, saturated_values = 0;
  struct Epoch {
    std::vector<hot::Key> keys, saturated_keys;
    std::vector<std::uint32_t> bits;
    std::vector<int> lens;
  };
  std::vector<Epoch> delivered;

  void StartEpoch(std::size_t packets, std::size_t values, std::size_t keys) {
    answered.assign(packets, false);
    answered_count = 0;
    bits.assign(values, 0);
    written.assign(keys, false);
    saturated.assign(keys, false);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static const FakeSwitch fake_switch;
  const std::shared_ptr<const hot::HotSet> hot_set = fuzz::FuzzHotSet();
  const std::vector<hot::Key> keys = fuzz::FuzzHotKeys();
  const std::vector<float> values = fuzz::FuzzHotValues();
  const std::uint32_t num_arrays = hot_set->layout().num_arrays;

  hotpath::RetryPolicy retry;
  retry.initial_timeout = kNever;
  retry.min_timeout = kNever;
  retry.max_timeout = kNever;

  hotpath::HotSenderOptions sender_options;
  sender_options.job_id = fuzz::kFuzzJobId;
  sender_options.worker_id = fuzz::kFuzzWorkerId;
  sender_options.switch_address = fake_switch.endpoint();
  sender_options.retry = retry;
  sender_options.replica_gap_timeout =
      std::chrono::duration_cast<std::chrono::milliseconds>(kNever);
  sender_options.key_owners = fuzz::FuzzKeyOwners();
  hotpath::HotSender sender(hot_set, sender_options);

  // The collector is server 0 with its keys 10, 12 and 14: their cells make
  // a COLLECT plan with holes (packet 0 asks slots 0 and 3, packet 1 slot 3).
  const std::vector<hot::Key> owned = fuzz::FuzzKeysOf(fuzz::kFuzzServerId);
  const std::vector<float> owned_values = fuzz::FuzzValuesOf(fuzz::kFuzzServerId);
  hotpath::HotCollectorOptions collector_options;
  collector_options.job_id = fuzz::kFuzzJobId;
  collector_options.scale_bits = kScaleBits;
  collector_options.server_id = fuzz::kFuzzServerId;
  collector_options.switch_address = fake_switch.endpoint();
  collector_options.retry = retry;
  collector_options.ready_poll = std::chrono::duration_cast<std::chrono::milliseconds>(kNever);
  std::mutex delivered_mutex;
  std::vector<hotpath::CollectedEpoch> delivered;
  hotpath::HotCollector collector(hot_set, owned, collector_options,
                                  [&](hotpath::CollectedEpoch epoch) {
                                    std::lock_guard lock(delivered_mutex);
                                    delivered.push_back(std::move(epoch));
                                  });

  // The collector's COLLECT plan, packed as it packs it.
  wire::Header collect_header;
  collect_header.type = wire::MessageType::kCollect;
  const std::vector<std::uint32_t> first_value =
      hotpath::CheckHotValues(*hot_set, owned, owned_values, {});
  const hotpath::PackedValues plan =
      hotpath::PackHotValues(*hot_set, collect_header, owned, first_value, {});
  const auto plan_packets = static_cast<std::uint32_t>(plan.packets.size());
  std::vector<std::uint32_t> len_of_key;
  std::vector<std::size_t> key_of_value;
  for (std::size_t k = 0; k < owned.size(); ++k) {
    len_of_key.push_back(hot_set->keys()[hot_set->Find(owned[k])].value_len);
    key_of_value.resize(key_of_value.size() + len_of_key.back(), k);
  }
  // The worker pushes every key: DATA packs like COLLECT, over all 8 cells.
  const auto data_packets = static_cast<std::uint32_t>(
      hotpath::PackHotValues(*hot_set, collect_header, keys,
                             hotpath::CheckHotValues(*hot_set, keys, values, {}), {})
          .packets.size());

  SenderModel worker;
  fuzz::ReplicaModel replica(*hot_set, fuzz::FuzzKeyOwners(), 0);
  CollectorModel server;
  server.StartEpoch(plan_packets, owned_values.size(), owned.size());
  if ((data[0] & 1) != 0) {
    sender.Push(0, keys, values);
    worker.pushed = true;
    worker.packets = data_packets;
    worker.fin_sent = true;
    WaitFor(
        [&] {
          const auto c = sender.counters();
          return c.data_packets == data_packets && c.fin_packets == 1;
        },
        "DATA and FIN sent");
  }

  std::uint64_t sent = 0, sent_bytes = 0;
  const bool sign = (data[0] & 2) != 0;
  std::vector<std::uint8_t> signed_copy;
  for (std::span<const std::uint8_t> datagram : fuzz::SplitRecords({data + 1, size - 1})) {
    wire::Header row_blocks;
    if (sign && wire::DecodeHeader(datagram, &row_blocks) == wire::DecodeError::kNone &&
        wire::PayloadOf(row_blocks.type) == wire::Payload::kRowBlocks) {
      signed_copy.assign(datagram.begin(), datagram.end());
      hotpath::SignUpdate(hotpath::UpdateKey{}, signed_copy);
      datagram = signed_copy;
    }
    fake_switch.SendTo(sender.local(), datagram);
    fake_switch.SendTo(collector.local(), datagram);
    ++sent;
    datagram = datagram.first(std::min(datagram.size(), kReceivedBytes));
    sent_bytes += datagram.size();
    WaitFor([&] { return sender.counters().packets_received == sent; }, "sender received");
    WaitFor([&] { return collector.counters().packets_received == sent; }, "collector received");

    wire::Message m;
    if (wire::Decode(datagram, &m) != wire::DecodeError::kNone) {
      ++worker.malformed;
      ++server.malformed;
      continue;
    }
    const wire::Header& h = m.header;
    if (h.job_id != fuzz::kFuzzJobId) {
      ++worker.ignored;
      ++server.ignored;
      continue;
    }

    // The worker.
    if (h.type == wire::MessageType::kAck && h.node_id == fuzz::kFuzzWorkerId) {
      worker.OnAck(h);
    } else if (h.type == wire::MessageType::kReplica &&
               !hotpath::VerifyUpdate(hotpath::UpdateKey{}, datagram)) {
      ++worker.forged_replicas;
    } else if (h.type == wire::MessageType::kReplica) {
      ++worker.replica_packets;
      const fuzz::ReplicaModel::Outcome out = replica.Apply(h, {m.cells.data(), h.slot_count});
      worker.replica_values += out.advanced;
      worker.stale_values += out.stale;
      worker.replica_epochs += out.epochs_completed;
      if (out.rejected || out.unknown != 0) ++worker.ignored;
    } else if (!(h.type == wire::MessageType::kProbeReply && h.node_id == fuzz::kFuzzWorkerId)) {
      ++worker.ignored;
    }

    // The collector.
    if (h.node_id != fuzz::kFuzzServerId) {
      ++server.ignored;
      continue;
    }
    if (h.type == wire::MessageType::kReady) {
      ++server.ready;
      if (h.epoch >= server.next_epoch) {
        server.ready_upto = std::max(server.ready_upto.value_or(h.epoch), h.epoch);
      }
      continue;
    }
    if (h.type != wire::MessageType::kResult) {
      ++server.ignored;
      continue;
    }
    // seq: the packet of the plan, and (high bits) which send it answers;
    // a poll's packet number says only whether the epoch is complete.
    const std::uint32_t k = h.seq & hotpath::kCollectSeqPacketMask;
    const bool poll = k == hotpath::kCollectPollPacket;
    if (h.epoch != server.next_epoch || (!poll && (!server.collecting() || k >= plan_packets))) {
      ++server.duplicates;
      continue;
    }
    if ((h.flags & wire::kFlagNotReady) != 0) {
      ++server.not_ready;
      if (server.collecting() && server.answered_count == 0) server.ready_upto.reset();
      continue;
    }
    if (poll) {
      if (!server.collecting()) server.ready_upto = server.next_epoch;
      continue;
    }
    if (server.answered[k]) {
      ++server.duplicates;
      continue;
    }
    // A compacted RESULT: value i answers COLLECT slot index (bit index of
    // the written mask), which must have been asked (a cell of a value, not a
    // hole). The format makes them valid and in increasing order.
    const std::uint16_t asked = plan.packets[k].slot_count();
    const auto position_of = [&](std::uint32_t j) {
      return plan.value_of_slot[std::size_t{k} * num_arrays + j];
    };
    bool accepted = true;
    for (std::uint32_t i = 0; i < h.slot_count && accepted; ++i) {
      const wire::Slot& slot = m.slots[i];
      Check(slot.valid && (i == 0 || slot.index > m.slots[i - 1].index), "RESULT decoded");
      accepted = slot.index < asked && position_of(slot.index) != hotpath::kNoValue;
    }
    if (!accepted) {
      ++server.ignored;
      continue;
    }
    server.answered[k] = true;
    ++server.results;
    for (std::uint32_t i = 0; i < h.slot_count; ++i) {
      const std::uint32_t position = position_of(m.slots[i].index);
      server.bits[position] = m.slots[i].value;
      server.written[key_of_value[position]] = true;
      ++server.written_values;
      if (m.slots[i].saturated) {
        server.saturated[key_of_value[position]] = true;
        ++server.saturated_values;
      }
    }
    if (++server.answered_count < plan_packets) continue;
    CollectorModel::Epoch epoch;
    for (std::size_t k = 0; k < owned.size(); ++k) {
      if (!server.written[k]) continue;
      const std::uint32_t len = len_of_key[k];
      epoch.keys.push_back(owned[k]);
      epoch.lens.push_back(static_cast<int>(len));
      epoch.bits.insert(epoch.bits.end(), server.bits.begin() + first_value[k],
                        server.bits.begin() + first_value[k] + len);
      if (server.saturated[k]) epoch.saturated_keys.push_back(owned[k]);
    }
    server.delivered.push_back(std::move(epoch));
    server.StartEpoch(plan_packets, owned_values.size(), owned.size());
    ++server.next_epoch;
  }

  const hotpath::HotSenderCounters s = sender.counters();
  Check(s.bytes_received == sent_bytes, "sender bytes_received");
  Check(s.malformed_packets == worker.malformed, "sender malformed_packets");
  Check(s.ignored_packets == worker.ignored, "sender ignored_packets");
  Check(s.acks == worker.acks && s.duplicate_acks == worker.duplicate_acks, "sender acks");
  Check(s.replica_packets == worker.replica_packets, "sender replica_packets");
  Check(s.forged_replicas == worker.forged_replicas, "sender forged_replicas");
  Check(s.replica_values == worker.replica_values, "sender replica_values");
  Check(s.stale_replica_values == worker.stale_values, "sender stale_replica_values");
  Check(s.replica_epochs == worker.replica_epochs, "sender replica_epochs");
  Check(s.fin_packets == (worker.fin_sent ? 1u : 0u), "sender fin_packets");
  Check(s.epochs_acked == (worker.fin_acked ? 1u : 0u), "sender epochs_acked");
  Check(s.retransmissions == 0 && s.epochs_failed == 0, "sender retransmitted");
  Check(sender.ReplicaEpoch() == replica.MinEpoch(), "sender replica epoch");

  WaitFor(
      [&] {
        std::lock_guard lock(delivered_mutex);
        return delivered.size() >= server.delivered.size();
      },
      "collector deliveries");
  const hotpath::HotCollectorCounters c = collector.counters();
  Check(c.bytes_received == sent_bytes, "collector bytes_received");
  Check(c.malformed_packets == server.malformed, "collector malformed_packets");
  Check(c.ignored_packets == server.ignored, "collector ignored_packets");
  Check(c.ready_received == server.ready, "collector ready_received");
  Check(c.results == server.results, "collector results");
  Check(c.duplicate_results == server.duplicates, "collector duplicate_results");
  Check(c.not_ready == server.not_ready, "collector not_ready");
  Check(c.written_values == server.written_values, "collector written_values");
  Check(c.saturated_values == server.saturated_values, "collector saturated_values");
  Check(c.epochs_collected == server.delivered.size() && c.epochs_failed == 0,
        "collector epochs_collected");
  {
    std::lock_guard lock(delivered_mutex);
    const dataplane::FixedPointCodec codec(kScaleBits);
    Check(delivered.size() == server.delivered.size(), "collector delivered");
    for (std::size_t e = 0; e < delivered.size(); ++e) {
      const hotpath::CollectedEpoch& got = delivered[e];
      const CollectorModel::Epoch& want = server.delivered[e];
      Check(got.epoch == e && got.status == hotpath::HotPathStatus::kOk && got.num_merged == 1,
            "delivered epoch");
      Check(got.keys == want.keys && got.lens == want.lens, "delivered keys");
      Check(got.saturated_keys == want.saturated_keys, "delivered saturated keys");
      Check(got.vals.size() == want.bits.size() && got.fixed.size() == want.bits.size(),
            "delivered value count");
      // A RESULT's word is the fixed-point sum; the epoch has it exactly and
      // as the table-driven float32 at the collector's scale.
      for (std::size_t i = 0; i < want.bits.size(); ++i) {
        const auto fixed = static_cast<std::int32_t>(want.bits[i]);
        Check(got.fixed[i] == fixed, "delivered fixed-point sums");
        Check(std::bit_cast<std::uint32_t>(got.vals[i]) == codec.ToFloatBits(fixed),
              "delivered values");
      }
    }
  }
  fake_switch.Drain();
  return 0;
}
