// The worker side of the hot path.
//
// HotSender takes the hot part of each push (keys of the installed hot set
// and their float gradients), packs it layout-aware into DATA packets, sends
// them to the switch with a window of outstanding packets, retransmits lost
// ones, and finishes the epoch with a FIN sent right behind its last DATA
// (again once every DATA is ACKed if a resend may have come after it). It
// also receives the REPLICA packets the switch fans out from the servers'
// UPDATEs and keeps a replica of the hot parameters, from which hot Pulls are
// served. docs/hotpath.md describes the threads, timeouts and guarantees.
//
// Epochs: the e-th push of every worker is epoch e (docs/design.md section 2).
// Pushes must carry consecutive epochs. Epoch e's DATA starts only once
// epoch e-1 is FIN-ACKed and epoch e-2 is released (its replica is complete
// or the caller committed it), so no more than two epochs (the switch's two
// banks) are ever in flight.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "hot/hot_set.h"
#include "hotpath/messages/update_auth.h"
#include "hotpath/node/engine_clock.h"
#include "hotpath/node/hot_path_options.h"
#include "hotpath/worker/hot_replica.h"
#include "net/udp_socket.h"
#include "wire/switch_job.h"

namespace libra::hotpath {

struct HotSenderOptions {
  std::uint32_t job_id = 0;
  std::uint16_t worker_id = 0;
  // The switch's data address: DATA, FIN and PROBE go there, and ACK,
  // REPLICA and PROBE_REPLY are taken only from there (engine_loop.h).
  UdpEndpoint switch_address;
  // Where the sender's socket binds; port 0 lets the kernel choose. The
  // switch admits packets by source address, so this is what the job lists.
  UdpEndpoint local{0x7f000001, 0};
  // A socket bound to `local` already, used instead of binding one
  // (EngineLoopOptions::socket); null: the sender binds `local`.
  std::shared_ptr<net::UdpSocket> socket;
  bool segmentation = true;  // EngineLoopOptions::segmentation
  // The switch's dedup window W: seq s goes out only once every seq <= s - W
  // is ACKed (docs/protocol.md). Also the most DATA packets outstanding.
  std::uint32_t dedup_window = 64;
  // Epochs pushed but not released (switch banks).
  std::uint32_t max_epochs_in_flight = 2;
  RetryPolicy retry;
  // A replica epoch that has begun to arrive (some REPLICA of it came) but
  // is still incomplete this long after its latest REPLICA, with no hole
  // that order shows, is reported as a gap. Not shorter: on a slow link the
  // REPLICAs wait behind the server's queue, which the worker's round trips
  // do not see, and a gap's repair moves all of a server's keys over ZeroMQ
  // (tried: 16 round trips within 20-500 ms repaired 3 needless gaps a
  // worker at 20 Mbit/s, a second each).
  std::chrono::milliseconds replica_gap_timeout{500};
  // A stream that order shows over and incomplete (HotReplica::
  // StreamHasHole) is reported this long after order shows it. Not waited
  // for by default: a REPLICA lost on its way to this worker only a repair
  // brings back, and one whose UPDATE the switch never got is resent by the
  // server as well, so that a repair may find it filled and ask nothing.
  // (Waiting four smoothed round trips, at least 1 ms, for the server's own
  // resend cost a 1 %-loss loopback job 3-5 % of its samples/s, 2026-12-04.)
  std::chrono::microseconds replica_order_grace{0};
  // The server that publishes each hot key (hot-set order), as the servers
  // split them; empty: server 0 publishes all.
  std::vector<std::uint16_t> key_owners;
  // The first epoch the servers publish (every value; later epochs only the
  // changed ones).
  std::uint32_t first_epoch = 0;
  // The key the servers sign their UPDATEs with: a REPLICA whose tag does
  // not verify under it is dropped before any of it is used.
  UpdateKey update_key;
  // What the I/O thread's timers (retransmission, FIN, probe resends, replica
  // gaps) and round-trip samples read (engine_clock.h); null: the steady
  // clock. It must outlive the sender. Pull's and ProbeSwitch's budgets are
  // the caller's waits and run in real time.
  const EngineClock* clock = nullptr;
};

// Epoch `epoch` of the replica lacks the values of `keys` (a lost REPLICA).
// The integration asks the servers for the packets `streams` lists and
// hands them to ApplyRepairPackets; if that leaves keys missing
// (MissingReplicaKeys), it re-requests their values and calls RepairReplica.
struct ReplicaGap {
  std::uint32_t epoch = 0;
  std::vector<hot::Key> keys;
  std::vector<StreamLoss> streams;
};

struct HotSenderCounters {
  std::uint64_t epochs_pushed = 0;
  std::uint64_t epochs_acked = 0;  // FIN acknowledged
  std::uint64_t epochs_failed = 0;
  std::uint64_t data_packets = 0;  // first transmissions
  std::uint64_t fin_packets = 0;
  std::uint64_t retransmissions = 0;       // DATA and FIN resent
  std::uint64_t fast_retransmissions = 0;  // of them, DATA resent as lost by order
  std::uint64_t timeouts = 0;              // timer expiries that caused resends
  // Resent DATA whose first send was the copy the switch added: the
  // timeout that resent it was spurious (the packet was late, not lost).
  std::uint64_t late_first_sends = 0;
  std::uint64_t packets_sent = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t packets_received = 0;
  std::uint64_t bytes_received = 0;
  std::uint64_t acks = 0;
  std::uint64_t duplicate_acks = 0;   // ACKs of packets already ACKed, or flagged DUPLICATE
  std::uint64_t replica_packets = 0;  // REPLICAs of this job that verified
  // REPLICAs of this job whose tag did not verify (forged, or changed on
  // the way): dropped unread, so they neither move the replica nor count as
  // one of its stream's packets.
  std::uint64_t forged_replicas = 0;
  std::uint64_t replica_values = 0;  // cells that moved the replica forward
  std::uint64_t replica_epochs = 0;  // (server, epoch) UPDATE streams completed
  std::uint64_t stale_replica_values = 0;
  std::uint64_t replica_gaps = 0;
  std::uint64_t replica_holes_by_order = 0;  // gaps found by order, reported early
  std::uint64_t repair_packets = 0;          // REPLICAs taken from packet repairs
  std::uint64_t malformed_packets = 0;       // not a wire message (wire::Decode failed)
  std::uint64_t ignored_packets = 0;         // another job or node, unexpected type or cell
  std::uint64_t foreign_packets = 0;         // this job's, not from the switch's address
  std::uint64_t send_errors = 0;
  // Where an epoch's time goes (microseconds, summed over epochs): from its
  // first DATA to the ACK of its FIN, and waiting in Pull for the replica.
  std::uint64_t data_micros = 0;
  std::uint64_t pull_wait_micros = 0;
};

// One epoch's hot push as the sender keeps it until the epoch is committed
// (switch-failure fallback and saturation resend it over ZeroMQ).
struct RetainedPush {
  std::uint32_t epoch = 0;
  std::vector<hot::Key> keys;
  std::vector<float> vals;
  std::vector<int> lens;
};

class HotSender {
 public:
  using GapCallback = std::function<void(const ReplicaGap&)>;
  using UnresponsiveCallback = std::function<void(std::uint32_t epoch)>;

  // Binds the socket and starts the I/O thread. Throws std::invalid_argument
  // on bad options, std::system_error when the socket cannot be bound.
  HotSender(std::shared_ptr<const hot::HotSet> hot_set, HotSenderOptions options);
  // Stops the I/O thread; unfinished pushes complete with kShutdown.
  ~HotSender();
  HotSender(const HotSender&) = delete;
  HotSender& operator=(const HotSender&) = delete;

  UdpEndpoint local() const;

  // Called on the I/O thread; keep them short (hand work off).
  void OnReplicaGap(GapCallback callback);
  void OnSwitchUnresponsive(UnresponsiveCallback callback);

  // Queues epoch `epoch`'s hot values: `keys` must be hot, `vals` their
  // values key after key, `lens` each key's value count (must equal its
  // value_len; empty means exactly that). Returns at once; the future
  // resolves kOk once the switch ACKed the FIN, kSwitchUnresponsive when it
  // stopped answering (this and every later push then fail at once), or
  // kShutdown. Throws std::invalid_argument on a cold key, a length mismatch
  // or an epoch that is not the previous one plus 1. `entries`, when not
  // empty, is the hot set's Lookup of each key, as the caller's split found
  // them (then no key is looked up again).
  std::shared_future<HotPathStatus> Push(std::uint32_t epoch, std::span<const hot::Key> keys,
                                         std::span<const float> vals,
                                         std::span<const int> lens = {},
                                         std::span<const hot::HotSet::Entry> entries = {});

  // The epochs up to and including `epoch` are applied by the servers: their
  // values are dropped and their banks released. A complete replica of an
  // epoch commits it too (servers publish only after applying).
  void Commit(std::uint32_t epoch);

  // Whether the switch answers a PROBE within `budget` (resent every 100 ms).
  // Blocks; for a caller that has waited long for the switch and must tell
  // a slow epoch from a dead switch.
  bool ProbeSwitch(std::chrono::milliseconds budget);
  // The values of an epoch not yet committed, if the sender still has them.
  std::optional<RetainedPush> Retained(std::uint32_t epoch) const;
  // Every pushed epoch not yet committed (whatever became of it on the
  // switch), oldest first: what the fallback resends after a switch failure.
  std::vector<RetainedPush> RetainedPushes() const;

  // Copies the replica's values of hot `keys` once each of their cells has
  // reached the epoch of the last push (or holds any value when nothing was
  // pushed yet), waiting at most `timeout`. kTimeout leaves `vals` untouched.
  // Throws std::invalid_argument on a cold key.
  HotPathStatus Pull(std::span<const hot::Key> keys, std::vector<float>* vals,
                     std::vector<int>* lens, std::chrono::milliseconds timeout);
  // The same for keys already looked up in this sender's hot set: `entries`
  // are theirs, one per key (trusted to belong to them; a cold one throws
  // std::invalid_argument), so that the wait and the copy look up nothing.
  HotPathStatus Pull(std::span<const hot::Key> keys, std::span<const hot::HotSet::Entry> entries,
                     std::vector<float>* vals, std::vector<int>* lens,
                     std::chrono::milliseconds timeout);
  // Installs values obtained another way (initial parameters, a gap
  // re-requested from the servers) as the replica of `epoch`; cells that
  // already hold a newer epoch keep theirs.
  void RepairReplica(std::uint32_t epoch, std::span<const hot::Key> keys,
                     std::span<const float> vals);
  // Takes UPDATE packets a server resent over the control plane (a packet
  // repair) as REPLICAs: each must verify with the job's key, as on the
  // data path; others are counted as forged or ignored. Returns how many
  // were taken.
  std::size_t ApplyRepairPackets(std::span<const std::string> packets);
  // The keys of the servers whose replica is not complete up to `epoch`.
  std::vector<hot::Key> MissingReplicaKeys(std::uint32_t epoch) const;
  // The oldest epoch any hot cell of the replica holds; nullopt while some
  // cell has never received a value.
  std::optional<std::uint32_t> ReplicaEpoch() const;

  HotSenderCounters counters() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace libra::hotpath
