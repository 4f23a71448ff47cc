// The server side of the hot path.
//
// HotCollector owns the cells of the hot keys this server is responsible
// for. When the switch announces READY(e) it reads those cells with COLLECT
// packets (re-asking on timeout; reads are idempotent), assembles the
// epoch's aggregated values (the switch's fixed-point sums, converted to
// float32 here) and hands them to a callback in epoch order. The server
// applies them and sends the keys' new values back with PublishUpdate; the
// switch replicates them to every worker. docs/hotpath.md describes the
// threads, timeouts and guarantees.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "hot/hot_set.h"
#include "hotpath/messages/update_auth.h"
#include "hotpath/node/engine_clock.h"
#include "hotpath/node/hot_path_options.h"
#include "net/udp_socket.h"
#include "wire/switch_job.h"

namespace libra::hotpath {

// A COLLECT's seq, echoed by the switch in its RESULT: the packet's number in
// the server's plan of the epoch in the low kCollectSeqPacketBits bits, and
// which send of it this is (0 the first, 1 the first resend, ..., at most
// 255) in the high bits, so that the collector knows which send an answer
// belongs to. A poll (is the epoch complete?) carries packet number
// kCollectPollPacket: its answer says READY or NOT_READY, and its values are
// never taken (the epoch's plan, chosen only once the epoch is complete, may
// read other cells in its packet 0).
inline constexpr unsigned kCollectSeqPacketBits = 24;
inline constexpr std::uint32_t kCollectSeqPacketMask = (1u << kCollectSeqPacketBits) - 1;
inline constexpr std::uint32_t kCollectPollPacket = kCollectSeqPacketMask;

struct HotCollectorOptions {
  std::uint32_t job_id = 0;
  std::uint16_t server_id = 0;
  // The switch's data address: COLLECT and UPDATE go there, and READY,
  // RESULT and ACK are taken only from there (engine_loop.h).
  UdpEndpoint switch_address;
  UdpEndpoint local{0x7f000001, 0};
  // A socket bound to `local` already, used instead of binding one
  // (EngineLoopOptions::socket); null: the collector binds `local`.
  std::shared_ptr<net::UdpSocket> socket;
  bool segmentation = true;       // EngineLoopOptions::segmentation
  std::uint32_t num_workers = 1;  // N: each sum covers this many pushes
  // The job's fixed point F (SwitchJob::scale_bits): a RESULT carries the
  // switch's fixed-point sums, which the collector converts to float32.
  int scale_bits = 16;
  std::uint32_t first_epoch = 0;  // the first epoch to collect
  // UPDATE packets sent and not yet ACKed by the switch at once, at most:
  // the collector takes fewer when a worker's socket could not queue that
  // many REPLICAs (UpdateWindowFor). Nothing in the switch limits it (an
  // UPDATE is written to the workers, not added); a window of 64 cost an
  // epoch's stream of ~170 packets three round trips behind the queue of
  // the server's loaded link.
  std::uint32_t update_window = 512;
  // Copies of an epoch's LAST UPDATE sent once the switch has ACKed it, so
  // that a REPLICA lost on the way to one worker is, most of the time, not
  // its stream's end: a worker learns that a stream is over only from its
  // LAST (or from a later epoch, which BSP holds back), so a lost LAST
  // costs the worker its whole gap timeout, while a copy costs each worker
  // one packet an epoch per server. With independent loss p, a worker
  // misses the end with probability p^(1 + tail_copies): with one copy, a
  // loopback job at 5 % loss (3 x 2 nodes, 300 epochs) waited the gap
  // timeout 1-3 times a run, with two 0-1 times. 0: none.
  std::uint32_t tail_copies = 2;
  // COLLECT requests outstanding at once. Reads are idempotent, so nothing
  // in the switch limits it; a window of 64 cost a round trip per 64
  // packets behind a loaded link's queue. Requests time out only when
  // answers stop coming (see ExpiresAt), so a burst's tail is not resent.
  std::uint32_t window = 1024;
  RetryPolicy retry;
  // With no READY for the next epoch this long, one COLLECT asks whether it
  // is complete (a lost READY costs this much, never the epoch). An answer
  // NOT_READY is asked again after the same interval. Once every worker has
  // reported the keys it writes in the epoch (written_keys_grace > 0), READY
  // is due: then the interval is four round trips to the switch (at least
  // 2 ms, at most this).
  std::chrono::milliseconds ready_poll{20};
  // Reading every cell (the plan of an epoch some worker did not report):
  // read whole rows (COLLECT flagged ROW) when this server's values occupy
  // rows no other server's value shares; otherwise one slot per cell.
  bool collect_by_row = false;
  // Wait this long after READY for every worker's report of the keys it
  // wrote (AddWrittenKeys), then read only their cells, packed as DATA is;
  // once it has passed, read every cell. 0: never wait, read every cell.
  std::chrono::milliseconds written_keys_grace{0};
  // What the I/O thread's timers and round-trip samples read (engine_clock.h);
  // null: the steady clock. It must outlive the collector.
  const EngineClock* clock = nullptr;
  // Signs every UPDATE (update_auth.h): the workers take only what verifies.
  UpdateKey update_key;
};

// One epoch's aggregate of this server's hot keys that some worker pushed
// (the switch returns only written cells): keys ascending, vals key after
// key, lens per key, as a PS-lite push carries them. A value of such a key
// that no worker pushed is 0.
struct CollectedEpoch {
  std::uint32_t epoch = 0;
  HotPathStatus status = HotPathStatus::kOk;  // kSwitchUnresponsive: no values
  std::uint32_t num_merged = 0;               // workers summed into each value
  std::vector<hot::Key> keys;
  std::vector<float> vals;
  std::vector<int> lens;
  // The hot-set entry of each of `keys` when the collector gave them (the
  // server then looks none up to publish the epoch); empty otherwise.
  std::vector<hot::HotSet::Entry> entries;
  // Keys with a saturated (or rejected) value: their sum is not exact, and
  // the server must aggregate them itself from the workers' retained values.
  std::vector<hot::Key> saturated_keys;
  // Collected from the switch (HotCollector), not summed by the server from
  // the workers' values: only such sums need the check (switch_sum_check.h).
  bool from_switch = false;
  // From the switch: each of `vals` as the switch summed it, in fixed point
  // (`vals` holds its float32). The check needs the exact sum, which a
  // float32 no longer holds once it passes 2^24. Empty otherwise.
  std::vector<std::int32_t> fixed;
};

// The UPDATE window a collector uses: `requested`, or fewer, so that a
// window of REPLICAs fits in a worker's receive queue of
// `receive_buffer_bytes` (SO_RCVBUF, the kernel's accounting of about twice
// a datagram's bytes) and a burst is not lost at a worker whose I/O thread
// was slow to run. The server judges by its own socket's queue: a job's
// hosts are alike (the same net.core.rmem_max caps what each could ask).
// At least 16 (or `requested`, if fewer), whatever the queue.
std::uint32_t UpdateWindowFor(std::uint32_t requested, int receive_buffer_bytes);

struct HotCollectorCounters {
  std::uint64_t epochs_collected = 0;
  std::uint64_t epochs_failed = 0;
  std::uint64_t ready_received = 0;
  std::uint64_t ready_polls = 0;
  std::uint64_t collect_packets = 0;       // first transmissions
  std::uint64_t row_collect_packets = 0;   // of them, reading a whole row (flag ROW)
  std::uint64_t retransmissions = 0;       // all resends, both kinds below
  std::uint64_t fast_retransmissions = 0;  // resent when later requests were answered
  std::uint64_t timeouts = 0;
  std::uint64_t results = 0;
  std::uint64_t not_ready = 0;
  std::uint64_t duplicate_results = 0;
  std::uint64_t written_values = 0;  // cells some worker pushed, as RESULTs returned them
  std::uint64_t saturated_values = 0;
  std::uint64_t update_packets = 0;
  std::uint64_t update_acks = 0;
  std::uint64_t update_retransmissions = 0;
  std::uint64_t update_fast_retransmissions = 0;  // of them, resent as lost by the ACKs' order
  std::uint64_t update_tail_copies = 0;           // copies of ACKed LAST UPDATEs (tail_copies)
  std::uint64_t repair_packets_answered = 0;      // UPDATEs given to workers (PublishedPackets)
  std::uint64_t updates_abandoned = 0;  // dropped unACKed when the switch stopped answering
  std::uint64_t packets_sent = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t packets_received = 0;
  std::uint64_t bytes_received = 0;
  std::uint64_t malformed_packets = 0;  // not a wire message (wire::Decode failed)
  std::uint64_t ignored_packets = 0;    // another job or node, unexpected type or cell
  std::uint64_t foreign_packets = 0;    // this job's, not from the switch's address
  std::uint64_t send_errors = 0;
  std::uint64_t key_reports = 0;                 // AddWrittenKeys calls taken
  std::uint64_t key_reports_ignored = 0;         // for an epoch done, or malformed
  std::uint64_t epochs_by_written_keys = 0;      // read by the workers' reports
  std::uint64_t packets_saved = 0;               // COLLECTs those epochs did not need
  std::uint64_t epochs_without_key_reports = 0;  // the grace passed: every cell read
  // Microseconds, summed over epochs: READY (or the poll that found the
  // epoch complete) to the last RESULT.
  std::uint64_t collect_micros = 0;
};

class HotCollector {
 public:
  // Called on the I/O thread, in epoch order; it may call PublishUpdate.
  // The thread handles no packet and no timer until it returns: the server
  // path applies the epoch there, which is safe while nothing of the next
  // epoch can come before this one is published (BSP), and must not wait
  // on anything the collector itself would have to do.
  using EpochCallback = std::function<void(CollectedEpoch)>;

  // `owned_keys`: the hot keys this server owns (each must be in the hot
  // set). Binds the socket and starts the I/O thread. Throws
  // std::invalid_argument on bad options or keys, std::system_error when the
  // socket cannot be bound.
  HotCollector(std::shared_ptr<const hot::HotSet> hot_set, std::span<const hot::Key> owned_keys,
               HotCollectorOptions options, EpochCallback on_epoch);
  ~HotCollector();
  HotCollector(const HotCollector&) = delete;
  HotCollector& operator=(const HotCollector&) = delete;

  UdpEndpoint local() const;
  // Whether an epoch without every worker's report reads whole rows
  // (HotCollectorOptions::collect_by_row and rows of this server's own), or
  // one slot per cell.
  bool collects_by_row() const;
  // The UPDATE window in use (UpdateWindowFor its socket's queue).
  std::uint32_t update_window() const;

  // Sends the new values of owned keys after epoch `epoch` as UPDATE packets
  // numbered from 0, the last flagged LAST (an empty one when `keys` is
  // empty); the switch replicates them to every worker. `keys` are owned
  // keys, each at most once (any order): those whose value changed, or all
  // of them; `vals` their values key after key. The switch ACKs each
  // UPDATE to the server, which keeps at most `update_window` unACKed and
  // resends late ones; a lost REPLICA is a replica gap the workers detect
  // and repair. `entries`, when given, are the keys' hot-set entries (a
  // CollectedEpoch's, trusted to belong to them), so that none is looked
  // up. Throws std::invalid_argument when keys, entries or vals do not
  // match.
  void PublishUpdate(std::uint32_t epoch, std::span<const hot::Key> keys,
                     std::span<const float> vals, std::span<const hot::HotSet::Entry> entries = {});

  // The UPDATE packets of epoch `epoch`'s stream numbered in `seqs`, and
  // every one from `tail_from` on (kNoStreamTail: none), as they were first
  // sent (signed, LAST on the last): what a worker that lost their REPLICAs
  // asks for. Each packet at most once, in stream order, however often the
  // request names it. Empty when the collector no longer keeps that epoch
  // (it keeps the latest kKeptStreams published). Thread-safe.
  static constexpr std::size_t kKeptStreams = 8;
  std::vector<std::string> PublishedPackets(std::uint32_t epoch,
                                            std::span<const std::uint32_t> seqs,
                                            std::uint32_t tail_from) const;

  // Worker `worker` wrote, in `epoch`, the owned keys `key_set` names
  // (written_keys.h: positions among the owned keys, ascending by key). Once
  // every worker has reported an epoch, its COLLECTs read only the cells of
  // keys some worker wrote, packed layout-aware (within written_keys_grace
  // of READY; a report that comes later, or none, costs reading every cell,
  // never a value). Ignored (and counted) for an epoch already collected or
  // with a malformed set. Thread-safe.
  void AddWrittenKeys(std::uint32_t epoch, std::uint32_t worker,
                      std::span<const std::uint8_t> key_set);

  HotCollectorCounters counters() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace libra::hotpath
