// Fuzzes the hot path's receive side end to end: the datagrams of the input
// (fuzz_records.h) are sent over loopback, one at a time, to a real
// HotSender (the worker: ACK and REPLICA handling) and a real HotCollector
// (the server: READY and RESULT handling), exactly as the switch would send
// them. Bit 0 of the first byte makes the worker push epoch 0 first, so that
// ACKs meet DATA in flight. Retries, polls and gap reports are pushed out of
// reach, which makes each engine a deterministic function of the datagrams.
// Invariants: every datagram is received and classified exactly as a plain
// model of the protocol says (malformed, ACK, REPLICA, READY, RESULT,
// duplicate, NOT_READY...), the worker's replica epoch and counts match the
// model, and every epoch the collector delivers carries the RESULT values.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

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
#include "hotpath/hot_packets.h"
#include "libra/hotpath_collector.h"
#include "libra/hotpath_sender.h"
#include "libra/wire.h"

namespace {

using namespace libra;
using namespace std::chrono_literals;

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
  bool pushed = false;
  std::uint32_t packets = 0;
  std::vector<bool> acked;
  std::uint32_t base = 0;
  bool fin_sent = false, fin_acked = false;
  std::uint64_t acks = 0, duplicate_acks = 0, replica_packets = 0;
  std::uint64_t replica_values = 0, stale_values = 0, malformed = 0;
  std::vector<std::uint32_t> tags;  // per hot value: epoch + 1, 0 = none

  void OnAck(const wire::Header& h) {
    ++acks;
    if ((h.flags & wire::kFlagDuplicate) != 0) ++duplicate_acks;
    if (!pushed || fin_acked || h.epoch != 0) return;
    if ((h.flags & wire::kFlagFin) != 0) {
      fin_acked = fin_sent && h.seq == packets;
      return;
    }
    if (fin_sent || h.seq >= packets || acked[h.seq]) return;
    acked[h.seq] = true;
    while (base < packets && acked[base]) ++base;
    fin_sent = base == packets;  // the turn that saw the last ACK sends FIN
  }
};

struct CollectorModel {
  std::uint32_t next_epoch = 0;
  std::vector<bool> answered;
  std::uint32_t answered_count = 0;
  std::vector<float> vals;
  std::uint64_t ready = 0, results = 0, duplicates = 0, not_ready = 0, malformed = 0;
  std::vector<std::vector<float>> delivered;
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
  retry.max_timeout = kNever;

  hotpath::HotSenderOptions sender_options;
  sender_options.job_id = fuzz::kFuzzJobId;
  sender_options.worker_id = fuzz::kFuzzWorkerId;
  sender_options.switch_address = fake_switch.endpoint();
  sender_options.retry = retry;
  sender_options.replica_gap_timeout =
      std::chrono::duration_cast<std::chrono::milliseconds>(kNever);
  hotpath::HotSender sender(hot_set, sender_options);

  hotpath::HotCollectorOptions collector_options;
  collector_options.job_id = fuzz::kFuzzJobId;
  collector_options.server_id = fuzz::kFuzzServerId;
  collector_options.switch_address = fake_switch.endpoint();
  collector_options.retry = retry;
  collector_options.ready_poll = std::chrono::duration_cast<std::chrono::milliseconds>(kNever);
  std::mutex delivered_mutex;
  std::vector<hotpath::CollectedEpoch> delivered;
  hotpath::HotCollector collector(hot_set, keys, collector_options,
                                  [&](hotpath::CollectedEpoch epoch) {
                                    std::lock_guard lock(delivered_mutex);
                                    delivered.push_back(std::move(epoch));
                                  });

  // The collector's COLLECT plan, from the same packer it uses.
  hot::LayoutAwarePacker packer(num_arrays);
  wire::Header collect_header;
  collect_header.type = wire::MessageType::kCollect;
  const std::vector<std::uint32_t> first_value =
      hotpath::CheckHotValues(*hot_set, keys, values, {});
  const hotpath::PackedValues plan =
      hotpath::PackHotValues(*hot_set, packer, collect_header, keys, first_value, {});
  const auto plan_packets = static_cast<std::uint32_t>(plan.packets.size());

  SenderModel worker;
  worker.tags.assign(hot_set->num_values(), 0);
  CollectorModel server;
  server.answered.assign(plan_packets, false);
  server.vals.assign(values.size(), 0.0f);
  if ((data[0] & 1) != 0) {
    sender.Push(0, keys, values);
    worker.pushed = true;
    worker.packets = plan_packets;  // DATA packs like COLLECT: same cells
    worker.acked.assign(plan_packets, false);
    WaitFor([&] { return sender.counters().data_packets == plan_packets; }, "DATA sent");
  }

  std::uint64_t sent = 0, sent_bytes = 0;
  for (std::span<const std::uint8_t> datagram : fuzz::SplitRecords({data + 1, size - 1})) {
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
    if (h.job_id != fuzz::kFuzzJobId) continue;
    if (h.type == wire::MessageType::kAck && h.node_id == fuzz::kFuzzWorkerId) worker.OnAck(h);
    if (h.type == wire::MessageType::kReplica) {
      ++worker.replica_packets;
      const std::uint32_t tag = h.epoch + 1;
      for (std::uint32_t j = 0; j < h.slot_count && j < num_arrays; ++j) {
        if (!m.slots[j].valid) continue;
        const auto owner = hot_set->OwnerOf({j, m.slots[j].index});
        if (!owner) continue;
        std::uint32_t& held = worker.tags[first_value[owner->key_index] + owner->offset];
        if (held >= tag) {
          ++worker.stale_values;
        } else {
          held = tag;
          ++worker.replica_values;
        }
      }
    }
    if (h.node_id != fuzz::kFuzzServerId) continue;
    if (h.type == wire::MessageType::kReady) ++server.ready;
    if (h.type != wire::MessageType::kResult) continue;
    if (h.epoch != server.next_epoch || h.seq >= plan_packets) {
      ++server.duplicates;
    } else if ((h.flags & wire::kFlagNotReady) != 0) {
      ++server.not_ready;
    } else if (h.slot_count != wire::LoadBig16(&plan.packets[h.seq].bytes[10])) {
      // ignored: a RESULT that does not answer the COLLECT it names
    } else if (server.answered[h.seq]) {
      ++server.duplicates;
    } else {
      server.answered[h.seq] = true;
      ++server.results;
      for (std::uint32_t j = 0; j < h.slot_count; ++j) {
        const std::uint32_t position = plan.value_of_slot[std::size_t{h.seq} * num_arrays + j];
        if (position != hotpath::kNoValue)
          server.vals[position] = std::bit_cast<float>(m.slots[j].value);
      }
      if (++server.answered_count == plan_packets) {
        server.delivered.push_back(server.vals);
        server.answered.assign(plan_packets, false);
        server.answered_count = 0;
        ++server.next_epoch;
      }
    }
  }

  const hotpath::HotSenderCounters s = sender.counters();
  Check(s.bytes_received == sent_bytes, "sender bytes_received");
  Check(s.malformed_packets == worker.malformed, "sender malformed_packets");
  Check(s.acks == worker.acks && s.duplicate_acks == worker.duplicate_acks, "sender acks");
  Check(s.replica_packets == worker.replica_packets, "sender replica_packets");
  Check(s.replica_values == worker.replica_values, "sender replica_values");
  Check(s.stale_replica_values == worker.stale_values, "sender stale_replica_values");
  Check(s.fin_packets == (worker.fin_sent ? 1u : 0u), "sender fin_packets");
  Check(s.epochs_acked == (worker.fin_acked ? 1u : 0u), "sender epochs_acked");
  Check(s.retransmissions == 0 && s.epochs_failed == 0, "sender retransmitted");
  std::optional<std::uint32_t> min_tag;
  for (const std::uint32_t tag : worker.tags) min_tag = std::min(min_tag.value_or(tag), tag);
  const std::optional<std::uint32_t> min_epoch =
      min_tag && *min_tag > 0 ? std::optional<std::uint32_t>(*min_tag - 1) : std::nullopt;
  Check(sender.ReplicaEpoch() == min_epoch, "sender replica epoch");

  WaitFor(
      [&] {
        std::lock_guard lock(delivered_mutex);
        return delivered.size() >= server.delivered.size();
      },
      "collector deliveries");
  const hotpath::HotCollectorCounters c = collector.counters();
  Check(c.bytes_received == sent_bytes, "collector bytes_received");
  Check(c.malformed_packets == server.malformed, "collector malformed_packets");
  Check(c.ready_received == server.ready, "collector ready_received");
  Check(c.results == server.results, "collector results");
  Check(c.duplicate_results == server.duplicates, "collector duplicate_results");
  Check(c.not_ready == server.not_ready, "collector not_ready");
  Check(c.epochs_collected == server.delivered.size() && c.epochs_failed == 0,
        "collector epochs_collected");
  {
    std::lock_guard lock(delivered_mutex);
    Check(delivered.size() == server.delivered.size(), "collector delivered");
    for (std::size_t e = 0; e < delivered.size(); ++e) {
      Check(delivered[e].epoch == e && delivered[e].status == hotpath::HotPathStatus::kOk,
            "delivered epoch");
      Check(delivered[e].keys == keys && delivered[e].vals.size() == values.size(),
            "delivered keys");
      for (std::size_t i = 0; i < values.size(); ++i) {
        Check(std::bit_cast<std::uint32_t>(delivered[e].vals[i]) ==
                  std::bit_cast<std::uint32_t>(server.delivered[e][i]),
              "delivered values");
      }
    }
  }
  fake_switch.Drain();
  return 0;
}
