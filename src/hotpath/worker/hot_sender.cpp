#include "hotpath/worker/hot_sender.h"

#include <array>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

#include "hotpath/messages/hot_packets.h"
#include "hotpath/node/engine_loop.h"
#include "hotpath/node/epoch_trace.h"
#include "hotpath/node/retry_clock.h"
#include "hotpath/worker/hot_replica.h"

namespace libra::hotpath {
namespace {

using Clock = EngineClock::Clock;
// With nothing to wait for, the I/O thread still wakes this often to look at
// the replica's gap timers.
constexpr auto kIdleWake = std::chrono::milliseconds(50);
// A probe without an answer is resent this often.
constexpr auto kProbeInterval = std::chrono::milliseconds(100);
// The switch tags cells with epoch + 1 in 31 bits (docs/protocol.md).
constexpr std::uint32_t kMaxEpoch = (1u << 31) - 2;

// One epoch's push from Push() until it is released.
struct PushEpoch {
  enum class Phase { kQueued, kData, kFin, kAcked, kFailed };

  RetainedPush retained;
  std::vector<EncodedPacket> packets;
  std::vector<bool> acked;
  std::vector<Clock::time_point> sent_at;
  std::vector<bool> resent;  // an ACK of a resent packet is no RTT sample
  // The latest resend by timeout: every unACKed packet's timer runs from
  // it or from the packet's own send, whichever is later (one timer per
  // epoch, as TCP's), so that the backoff spaces the expiries.
  Clock::time_point timer_restarted;
  // Loss detection by order (SendData): every send of a DATA packet gets the
  // next number; the newest send known ACKed.
  std::vector<std::uint64_t> send_order;
  std::uint64_t sends = 0;
  std::uint64_t newest_acked_send = 0;
  std::uint32_t base = 0;  // lowest seq not ACKed
  std::uint32_t next = 0;  // next seq to send for the first time
  EncodedPacket fin;       // encoded when first sent (length 0 until then)
  Clock::time_point fin_sent_at;
  std::uint64_t fin_send_order = 0;  // DATA sends before the FIN's first send
  // The switch added a DATA from a copy sent after the FIN: the FIN came
  // before it and was dropped (its count was more than the switch saw).
  bool fin_dropped = false;
  Clock::time_point data_started;
  Phase phase = Phase::kQueued;
  bool released = false;  // committed, or its replica is complete
  // Shared so that a failure can be announced after the lock is dropped.
  std::shared_ptr<std::promise<HotPathStatus>> done =
      std::make_shared<std::promise<HotPathStatus>>();

  std::uint32_t epoch() const { return retained.epoch; }
  bool fin_sent() const { return fin.length != 0; }
  bool finished() const { return phase == Phase::kAcked || phase == Phase::kFailed; }
  Clock::time_point TimerStart(std::uint32_t seq) const {
    return std::max(sent_at[seq], timer_restarted);
  }
};

}  // namespace

// The sender's protocol, run by its EngineLoop: the loop's mutex guards
// everything below but hot_set, options and the push_mutex's queuer.
struct HotSender::Impl final : EngineHandler {
  Impl(std::shared_ptr<const hot::HotSet> hot_set_in, HotSenderOptions options_in)
      : hot_set(std::move(hot_set_in)),
        options(Checked(options_in, *hot_set)),
        loop(EngineLoopOptions{options.job_id, options.local, options.switch_address, options.clock,
                               options.socket, options.segmentation}),
        clock(loop.clock()),
        queuer(hot_set),
        replica(*hot_set, options.key_owners, options.first_epoch),
        retry(options.retry) {
    loop.Start(*this, "hot-sender");
  }

  ~Impl() override {
    loop.Stop();
    for (PushEpoch& epoch : epochs) {
      if (!epoch.finished()) epoch.done->set_value(HotPathStatus::kShutdown);
    }
    replica_changed.notify_all();
  }

  static const HotSenderOptions& Checked(const HotSenderOptions& options,
                                         const hot::HotSet& hot_set) {
    options.retry.Validate();
    if (options.dedup_window == 0) throw std::invalid_argument("hot sender: dedup_window is 0");
    if (options.max_epochs_in_flight == 0) {
      throw std::invalid_argument("hot sender: max_epochs_in_flight is 0");
    }
    if (hot_set.layout().num_arrays > wire::kMaxSlots) {
      throw std::invalid_argument("hot sender: more register arrays than slots in a packet");
    }
    return options;
  }

  void OnMessage(const wire::Message& message, std::span<const std::uint8_t> bytes,
                 const UdpEndpoint& from) override;
  Clock::time_point Progress(Clock::time_point now, net::SendQueue& out) override;
  void HandleAck(const wire::Header& ack);
  void HandleReplica(std::span<const std::uint8_t> bytes, const wire::Message& message);
  void SendDue(Clock::time_point now, net::SendQueue& out);
  bool CanStart(const PushEpoch& epoch) const;
  void SendData(PushEpoch& epoch, Clock::time_point now, net::SendQueue& out);
  void Resend(EncodedPacket& packet, net::SendQueue& out);
  void FailAll();
  void Release(std::uint32_t upto);
  void WatchGaps(Clock::time_point now);
  // How long an epoch's REPLICAs may pause before the epoch is reported as
  // a gap when order shows nothing (its LAST, or the whole stream, lost).
  Clock::duration GapTimeout() const { return options.replica_gap_timeout; }
  void CheckGaps(Clock::time_point now);
  Clock::time_point NextDeadline(Clock::time_point now) const;

  std::shared_ptr<const hot::HotSet> hot_set;
  const HotSenderOptions options;
  // The socket, the I/O thread and the lock. Lock order: push_mutex, then
  // the loop's mutex (Push packs under the first and queues under both).
  EngineLoop loop;
  std::mutex& mutex = loop.mutex();
  const EngineClock& clock;

  std::mutex push_mutex;  // serializes Push: packing, then queueing in order
  RowOrderQueuer queuer;  // under push_mutex

  std::condition_variable replica_changed;
  std::deque<PushEpoch> epochs;  // pushed and not yet released, oldest first
  std::optional<std::uint32_t> last_pushed;
  std::optional<std::uint32_t> first_pushed;
  bool switch_down = false;
  HotReplica replica;
  // Epochs of the replica being watched for gaps: when to report each, and
  // whether order already showed it a hole (then later REPLICAs do not put
  // the report off).
  struct GapWatch {
    Clock::time_point deadline;
    bool hole = false;
  };
  std::map<std::uint32_t, GapWatch> gap_deadlines;
  std::optional<std::uint32_t> gaps_watched_upto;
  RetryClock retry;
  HotSenderCounters counters;  // but the datagram counts, which the loop keeps
  // counters.replica_epochs as the last turn left it: a completed stream
  // is what moves a waiting Pull.
  std::uint64_t replica_epochs_seen = 0;
  GapCallback on_gap;
  UnresponsiveCallback on_unresponsive;
  // ProbeSwitch: the nonce of the probe being waited for, when to (re)send
  // it, and the last nonce the switch echoed.
  std::optional<std::uint32_t> probe_pending;
  std::uint32_t probe_nonce = 0;
  std::uint32_t probe_answered = 0;
  Clock::time_point probe_next;
  std::array<std::uint8_t, wire::kHeaderBytes> probe_bytes{};
  std::condition_variable probe_changed;
};

Clock::time_point HotSender::Impl::Progress(Clock::time_point now, net::SendQueue& out) {
  // Only a completed stream can make a waiting Pull's keys current (or
  // release a bank): waking the puller for every REPLICA made it rescan its
  // keys hundreds of times an epoch.
  if (counters.replica_epochs != replica_epochs_seen) {
    replica_epochs_seen = counters.replica_epochs;
    if (const auto reached = replica.MinEpoch()) Release(*reached);
    replica_changed.notify_all();
  }
  // Released epochs leave only now: the last turn's queue pointed into them,
  // and the loop flushed it when that turn ended.
  while (!epochs.empty() && epochs.front().released && epochs.front().finished()) {
    epochs.pop_front();
  }
  SendDue(now, out);
  WatchGaps(now);
  CheckGaps(now);
  return NextDeadline(now);
}

void HotSender::Impl::OnMessage(const wire::Message& message, std::span<const std::uint8_t> bytes,
                                const UdpEndpoint&) {
  switch (message.header.type) {
    case wire::MessageType::kAck:
      if (message.header.node_id != options.worker_id) break;
      HandleAck(message.header);
      return;
    case wire::MessageType::kReplica:
      HandleReplica(bytes, message);
      return;
    case wire::MessageType::kProbeReply:
      if (message.header.node_id != options.worker_id) break;
      if (probe_pending && message.header.seq == *probe_pending) {
        probe_answered = message.header.seq;
        probe_changed.notify_all();
      }
      return;
    default:
      break;
  }
  loop.CountIgnored();
}

void HotSender::Impl::HandleAck(const wire::Header& ack) {
  ++counters.acks;
  if ((ack.flags & wire::kFlagDuplicate) != 0) ++counters.duplicate_acks;
  // Only the one epoch on the wire can be ACKed; anything else is a late
  // answer to a resend.
  for (PushEpoch& epoch : epochs) {
    if (epoch.finished()) continue;
    if (epoch.epoch() != ack.epoch) return;
    if ((ack.flags & wire::kFlagFin) != 0) {
      // The switch ACKs a FIN only when it has seen all `seq` DATA of the
      // epoch: this ACK ends the push even if some DATA ACKs were lost.
      if (!epoch.fin_sent() || ack.seq != epoch.packets.size()) return;
      epoch.phase = PushEpoch::Phase::kAcked;
      counters.data_micros += static_cast<std::uint64_t>(
          std::chrono::duration_cast<std::chrono::microseconds>(clock.Now() - epoch.data_started)
              .count());
      epoch.packets = {};
      epoch.acked = {};
      epoch.sent_at = {};
      epoch.resent = {};
      epoch.send_order = {};
      TraceEpoch("fin_acked", options.worker_id, epoch.epoch());
      epoch.done->set_value(HotPathStatus::kOk);
      ++counters.epochs_acked;
      retry.OnProgress();
      return;
    }
    if (epoch.phase != PushEpoch::Phase::kData || ack.seq >= epoch.next) return;
    // Which send of a resent packet an ACK answers, for loss by order: the
    // switch echoes RETRANSMISSION when the copy it added was a resend, and
    // flags DUPLICATE a copy after the one it added; over one FIFO path
    // either is the latest resend, which came after every packet sent
    // before it. (Of several resends it may be an earlier one: then some
    // packets look lost that are not, and are resent as duplicates.) An ACK
    // with neither answers the first send, which was late, not lost: the
    // timeout that resent it was spurious, and taking the ACK for the resend
    // would make every packet sent between the two look lost (Karn's rule,
    // for order).
    const bool resent = epoch.resent[ack.seq];
    const bool answers_resend =
        (ack.flags & (wire::kFlagRetransmission | wire::kFlagDuplicate)) != 0;
    if (!resent || answers_resend) {  // the ACK answers the packet's latest send
      epoch.newest_acked_send = std::max(epoch.newest_acked_send, epoch.send_order[ack.seq]);
    }
    if ((ack.flags & wire::kFlagRetransmission) != 0 && epoch.fin_sent() &&
        epoch.send_order[ack.seq] > epoch.fin_send_order) {
      epoch.fin_dropped = true;
    }
    if (epoch.acked[ack.seq]) return;
    epoch.acked[ack.seq] = true;
    if (!resent) {
      retry.OnRttSample(std::chrono::duration_cast<std::chrono::microseconds>(
          clock.Now() - epoch.sent_at[ack.seq]));
    } else if (!answers_resend) {
      ++counters.late_first_sends;
    }
    while (epoch.base < epoch.next && epoch.acked[epoch.base]) ++epoch.base;
    retry.OnProgress();
    return;
  }
}

void HotSender::Impl::HandleReplica(std::span<const std::uint8_t> bytes,
                                    const wire::Message& message) {
  // Before the replica sees it: a forged packet with a real one's (server,
  // epoch, seq) must not take that place in the stream, or the real one
  // would then be ignored as a duplicate.
  if (!VerifyUpdate(options.update_key, bytes)) {
    ++counters.forged_replicas;
    return;
  }
  ++counters.replica_packets;
  if (message.header.seq == 0 && message.header.node_id == 0)
    TraceEpoch("replica_first", options.worker_id, message.header.epoch);
  const HotReplica::ApplyResult result =
      replica.Apply(message.header, std::span(message.cells.data(), message.header.slot_count));
  counters.replica_values += result.advanced;
  counters.stale_replica_values += result.stale;
  counters.replica_epochs += result.epochs_completed;
  if (result.epochs_completed > 0) TraceEpoch("replica", options.worker_id, message.header.epoch);
  if (result.rejected || result.unknown != 0) loop.CountIgnored();
  if (result.rejected) return;
  // The epoch is still arriving: on a slow link its REPLICAs take longer
  // than the gap timeout, so the timeout counts from the latest one (unless
  // order already showed a hole: WatchGaps).
  const Clock::time_point later = clock.Now() + GapTimeout();
  for (auto& [epoch, watch] : gap_deadlines) {
    if (epoch <= message.header.epoch && !watch.hole) {
      watch.deadline = std::max(watch.deadline, later);
    }
  }
}

bool HotSender::Impl::CanStart(const PushEpoch& epoch) const {
  std::uint32_t in_flight = 1;
  for (const PushEpoch& earlier : epochs) {
    if (&earlier == &epoch) break;
    if (!earlier.finished()) return false;  // one epoch on the wire at a time
    if (!earlier.released) ++in_flight;
  }
  return in_flight <= options.max_epochs_in_flight;
}

void HotSender::Impl::Resend(EncodedPacket& packet, net::SendQueue& out) {
  packet.SetFlags(wire::kFlagRetransmission);
  out.PushView(packet.view(), options.switch_address);
  ++counters.retransmissions;
}

void HotSender::Impl::SendData(PushEpoch& epoch, Clock::time_point now, net::SendQueue& out) {
  // Lost by order: the switch ACKs DATA in the order they arrive, over one
  // FIFO path each way, so a packet still unACKed once one sent
  // kReorderTolerance or more sends after it has been ACKed was lost (or its
  // ACK was). It is resent now, not after the timeout (on loopback the
  // timeout's floor is 25 round trips); a needless resend is a duplicate the
  // switch ACKs without adding.
  // Otherwise a timer expiry resends one packet, the lowest unACKed, and
  // backs off. Its ACK tells the rest: if the resend was the copy added (or
  // came after the one added), every packet sent before it and still
  // unACKed is lost by order; if the first send was added, it was only
  // late, and so are the packets behind it in the same queue. Resending
  // every timed-out packet instead doubled what a queued link carried:
  // behind a shaper that the cold pushes filled, workers resent 40-65 % of
  // their DATA.
  constexpr std::uint64_t kReorderTolerance = 3;
  const auto timeout = retry.timeout();
  bool timed_out = false;
  for (std::uint32_t seq = epoch.base; seq < epoch.next; ++seq) {
    if (epoch.acked[seq]) continue;
    const bool lost_by_order = epoch.send_order[seq] + kReorderTolerance <= epoch.newest_acked_send;
    if (lost_by_order) {
      ++counters.fast_retransmissions;
    } else if (!timed_out && now >= epoch.TimerStart(seq) + timeout) {
      timed_out = true;
      epoch.timer_restarted = now;
      ++counters.timeouts;
      if (!retry.OnTimeout()) {
        FailAll();
        return;
      }
    } else {
      continue;
    }
    Resend(epoch.packets[seq], out);
    epoch.sent_at[seq] = now;
    epoch.resent[seq] = true;
    epoch.send_order[seq] = ++epoch.sends;
  }
  // New packets, never beyond the switch's dedup window.
  const std::uint64_t limit = std::min<std::uint64_t>(
      epoch.packets.size(), std::uint64_t{epoch.base} + options.dedup_window);
  while (epoch.next < limit) {
    out.PushView(epoch.packets[epoch.next].view(), options.switch_address);
    epoch.sent_at[epoch.next] = now;
    epoch.send_order[epoch.next] = ++epoch.sends;
    ++epoch.next;
    ++counters.data_packets;
  }
}

void HotSender::Impl::SendDue(Clock::time_point now, net::SendQueue& out) {
  if (probe_pending && now >= probe_next) {
    wire::Header probe;
    probe.type = wire::MessageType::kProbe;
    probe.job_id = options.job_id;
    probe.node_id = options.worker_id;
    probe.seq = *probe_pending;
    wire::Encode(probe, {}, probe_bytes);
    out.PushView(probe_bytes, options.switch_address);
    probe_next = now + kProbeInterval;
  }
  if (switch_down) return;
  for (PushEpoch& epoch : epochs) {
    if (epoch.finished()) continue;
    if (epoch.phase == PushEpoch::Phase::kQueued) {
      if (!CanStart(epoch)) return;
      epoch.phase = PushEpoch::Phase::kData;
      epoch.data_started = now;
    }
    if (epoch.phase == PushEpoch::Phase::kData) {
      SendData(epoch, now, out);
      if (switch_down) return;
      // The FIN goes right behind the epoch's last DATA, not after their
      // ACKs: over one FIFO path it reaches the switch after them, and the
      // switch counts it only if it saw every DATA (else drops it). Waiting
      // for the ACKs put a round trip to the switch on the path every
      // worker's next iteration waits for.
      if (!epoch.fin_sent() && epoch.next == epoch.packets.size()) {
        wire::Header fin;
        fin.type = wire::MessageType::kFin;
        fin.job_id = options.job_id;
        fin.node_id = options.worker_id;
        fin.epoch = epoch.epoch();
        fin.seq = static_cast<std::uint32_t>(epoch.packets.size());
        epoch.fin.length = static_cast<std::uint16_t>(wire::Encode(fin, {}, epoch.fin.bytes));
        out.PushView(epoch.fin.view(), options.switch_address);
        epoch.fin_sent_at = now;
        epoch.fin_send_order = epoch.sends;
        ++counters.fin_packets;
      }
      if (epoch.base < epoch.packets.size()) return;
      epoch.phase = PushEpoch::Phase::kFin;
      // Every DATA is ACKed now. A FIN the switch dropped goes again at
      // once, not after its timer. (A resend whose first send the switch
      // added, late, leaves the FIN behind that first send: counted.)
      if (epoch.fin_dropped) {
        Resend(epoch.fin, out);
        epoch.fin_sent_at = now;
        epoch.fin_dropped = false;
      }
      return;
    }
    // kFin: resend until ACKed.
    if (now >= epoch.fin_sent_at + retry.timeout()) {
      ++counters.timeouts;
      if (!retry.OnTimeout()) {
        FailAll();
        return;
      }
      Resend(epoch.fin, out);
      epoch.fin_sent_at = now;
    }
    return;
  }
}

void HotSender::Impl::FailAll() {
  switch_down = true;
  std::vector<std::shared_ptr<std::promise<HotPathStatus>>> failed;
  std::optional<std::uint32_t> first_failed;
  for (PushEpoch& epoch : epochs) {
    if (epoch.finished()) continue;
    if (!first_failed) first_failed = epoch.epoch();
    epoch.phase = PushEpoch::Phase::kFailed;
    failed.push_back(epoch.done);
    ++counters.epochs_failed;
  }
  // The callback runs before the futures resolve, so whoever waits on a
  // push finds the failure already reported.
  if (first_failed && on_unresponsive) {
    loop.Notify([callback = on_unresponsive, epoch = *first_failed] { callback(epoch); });
  }
  loop.Notify([failed = std::move(failed)] {
    for (const auto& done : failed) done->set_value(HotPathStatus::kSwitchUnresponsive);
  });
}

void HotSender::Impl::Release(std::uint32_t upto) {
  for (PushEpoch& epoch : epochs) {
    if (epoch.epoch() > upto) break;
    epoch.released = true;
  }
}

void HotSender::Impl::WatchGaps(Clock::time_point now) {
  // An epoch is watched once the replica has begun to reach it (some cell
  // holds it or a later one) and this worker has pushed it.
  const std::optional<std::uint32_t> newest = replica.MaxEpoch();
  if (!newest || !last_pushed) return;
  const std::uint32_t upto = std::min(*newest, *last_pushed);
  std::uint32_t from = gaps_watched_upto ? *gaps_watched_upto + 1 : *first_pushed;
  for (; from <= upto; ++from) {
    gap_deadlines.emplace(from, GapWatch{now + GapTimeout()});
    gaps_watched_upto = from;
  }
  // A stream that order shows over and incomplete (its LAST came, or a later
  // epoch of the same server did) has lost a packet: the epoch is reported
  // after replica_order_grace (at once by default), not after the whole gap
  // timeout. If the UPDATE was lost on its way to the switch the server
  // resends it too, and a repair that finds the hole filled asks nothing.
  const Clock::time_point soon = now + options.replica_order_grace;
  for (auto& [epoch, watch] : gap_deadlines) {
    if (watch.hole || !replica.EpochHasHole(epoch)) continue;
    watch.hole = true;
    TraceEpoch("hole", options.worker_id, epoch);
    watch.deadline = std::min(watch.deadline, soon);
    ++counters.replica_holes_by_order;
  }
}

void HotSender::Impl::CheckGaps(Clock::time_point now) {
  const std::optional<std::uint32_t> reached = replica.MinEpoch();
  for (auto it = gap_deadlines.begin(); it != gap_deadlines.end();) {
    const std::uint32_t epoch = it->first;
    if (reached && *reached >= epoch) {
      it = gap_deadlines.erase(it);
      continue;
    }
    if (now < it->second.deadline) {
      ++it;
      continue;
    }
    ++counters.replica_gaps;
    TraceEpoch("gap", options.worker_id, epoch);
    if (on_gap) {
      loop.Notify(
          [callback = on_gap, gap = ReplicaGap{epoch, replica.MissingKeys(epoch),
                                               replica.LostPackets(epoch)}] { callback(gap); });
    }
    it = gap_deadlines.erase(it);
  }
}

Clock::time_point HotSender::Impl::NextDeadline(Clock::time_point now) const {
  Clock::time_point deadline = now + kIdleWake;
  for (const auto& [epoch, watch] : gap_deadlines) deadline = std::min(deadline, watch.deadline);
  if (probe_pending) deadline = std::min(deadline, probe_next);
  if (switch_down) return deadline;
  for (const PushEpoch& epoch : epochs) {
    if (epoch.finished()) continue;
    if (epoch.phase == PushEpoch::Phase::kData) {
      for (std::uint32_t seq = epoch.base; seq < epoch.next; ++seq) {
        if (epoch.acked[seq]) continue;
        deadline = std::min(deadline, epoch.TimerStart(seq) + retry.timeout());
      }
    } else if (epoch.phase == PushEpoch::Phase::kFin) {
      deadline = std::min(deadline, epoch.fin_sent_at + retry.timeout());
    }
    break;
  }
  return deadline;
}

HotSender::HotSender(std::shared_ptr<const hot::HotSet> hot_set, HotSenderOptions options) {
  if (hot_set == nullptr) throw std::invalid_argument("hot sender: no hot set");
  impl_ = std::make_unique<Impl>(std::move(hot_set), options);
}

HotSender::~HotSender() = default;

UdpEndpoint HotSender::local() const { return impl_->loop.local(); }

void HotSender::OnReplicaGap(GapCallback callback) {
  std::lock_guard lock(impl_->mutex);
  impl_->on_gap = std::move(callback);
}

void HotSender::OnSwitchUnresponsive(UnresponsiveCallback callback) {
  std::lock_guard lock(impl_->mutex);
  impl_->on_unresponsive = std::move(callback);
}

std::shared_future<HotPathStatus> HotSender::Push(std::uint32_t epoch,
                                                  std::span<const hot::Key> keys,
                                                  std::span<const float> vals,
                                                  std::span<const int> lens,
                                                  std::span<const hot::HotSet::Entry> entries) {
  Impl& impl = *impl_;
  // Each key is looked up once: here, unless the caller's split did.
  std::vector<hot::HotSet::Entry> looked_up;
  std::vector<std::uint32_t> first_value;
  if (entries.empty()) {
    first_value = CheckHotValues(*impl.hot_set, keys, vals, lens, &looked_up);
    entries = looked_up;
  } else {
    first_value = CheckHotValues(keys, entries, vals, lens);
  }
  std::lock_guard push_lock(impl.push_mutex);
  {
    std::lock_guard lock(impl.mutex);
    if (impl.last_pushed && epoch != *impl.last_pushed + 1) {
      throw std::invalid_argument("hot push: epoch " + std::to_string(epoch) + " after epoch " +
                                  std::to_string(*impl.last_pushed) + " (must be consecutive)");
    }
    if (epoch > kMaxEpoch) {
      throw std::invalid_argument("hot push: epoch " + std::to_string(epoch) + " out of range");
    }
  }

  PushEpoch push;
  push.retained.epoch = epoch;
  push.retained.keys.assign(keys.begin(), keys.end());
  push.retained.vals.assign(vals.begin(), vals.end());
  push.retained.lens.reserve(entries.size());
  for (const hot::HotSet::Entry& entry : entries) {
    push.retained.lens.push_back(static_cast<int>(entry.value_len));
  }
  wire::Header header;
  header.type = wire::MessageType::kData;
  header.job_id = impl.options.job_id;
  header.node_id = impl.options.worker_id;
  header.epoch = epoch;
  push.packets =
      PackQueuedCells(header, impl.queuer.Queue(keys, entries, first_value), vals).packets;
  push.acked.assign(push.packets.size(), false);
  push.sent_at.assign(push.packets.size(), Clock::time_point{});
  push.resent.assign(push.packets.size(), false);
  push.send_order.assign(push.packets.size(), 0);
  std::shared_future<HotPathStatus> future = push.done->get_future().share();

  {
    std::lock_guard lock(impl.mutex);
    if (impl.loop.stopping()) {
      push.done->set_value(HotPathStatus::kShutdown);
      return future;
    }
    if (impl.switch_down) {
      // Kept for the fallback, which resends it over ZeroMQ.
      push.phase = PushEpoch::Phase::kFailed;
      push.done->set_value(HotPathStatus::kSwitchUnresponsive);
      ++impl.counters.epochs_failed;
    }
    impl.epochs.push_back(std::move(push));
    impl.last_pushed = epoch;
    if (!impl.first_pushed) impl.first_pushed = epoch;
    ++impl.counters.epochs_pushed;
  }
  impl.loop.Wake();
  return future;
}

bool HotSender::ProbeSwitch(std::chrono::milliseconds budget) {
  Impl& impl = *impl_;
  std::unique_lock lock(impl.mutex);
  const std::uint32_t nonce = ++impl.probe_nonce;
  impl.probe_pending = nonce;
  impl.probe_next = impl.clock.Now();
  impl.loop.Wake();
  const bool answered =
      impl.probe_changed.wait_for(lock, budget, [&] { return impl.probe_answered == nonce; });
  impl.probe_pending.reset();
  return answered;
}

void HotSender::Commit(std::uint32_t epoch) {
  {
    std::lock_guard lock(impl_->mutex);
    impl_->Release(epoch);
  }
  impl_->loop.Wake();
}

std::optional<RetainedPush> HotSender::Retained(std::uint32_t epoch) const {
  std::lock_guard lock(impl_->mutex);
  for (const PushEpoch& push : impl_->epochs) {
    if (push.epoch() == epoch && !push.released) return push.retained;
  }
  return std::nullopt;
}

std::vector<RetainedPush> HotSender::RetainedPushes() const {
  std::lock_guard lock(impl_->mutex);
  std::vector<RetainedPush> out;
  for (const PushEpoch& push : impl_->epochs) {
    if (!push.released) out.push_back(push.retained);
  }
  return out;
}

HotPathStatus HotSender::Pull(std::span<const hot::Key> keys, std::vector<float>* vals,
                              std::vector<int>* lens, std::chrono::milliseconds timeout) {
  return Pull(keys, impl_->hot_set->LookupAll(keys), vals, lens, timeout);
}

HotPathStatus HotSender::Pull(std::span<const hot::Key> keys,
                              std::span<const hot::HotSet::Entry> entries, std::vector<float>* vals,
                              std::vector<int>* lens, std::chrono::milliseconds timeout) {
  Impl& impl = *impl_;
  if (entries.size() != keys.size()) {
    throw std::invalid_argument("hot pull: " + std::to_string(keys.size()) + " keys but " +
                                std::to_string(entries.size()) + " hot-set entries");
  }
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (entries[i].index == hot::HotSet::kCold) {
      throw std::invalid_argument("hot pull: key " + std::to_string(keys[i]) +
                                  " is not in the hot set");
    }
  }
  std::unique_lock lock(impl.mutex);
  const std::optional<std::uint32_t> target = impl.last_pushed;
  // The caller's wait, in real time: the timeout is the caller's budget, not
  // an engine timer (those read the engine clock).
  const auto waited_from = std::chrono::steady_clock::now();
  const bool reached = impl.replica_changed.wait_for(
      lock, timeout, [&] { return impl.loop.stopping() || impl.replica.Reached(entries, target); });
  impl.counters.pull_wait_micros +=
      static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                     std::chrono::steady_clock::now() - waited_from)
                                     .count());
  if (!reached) return HotPathStatus::kTimeout;
  if (!impl.replica.Reached(entries, target)) return HotPathStatus::kShutdown;
  vals->clear();
  if (lens != nullptr) lens->clear();
  impl.replica.Read(entries, vals, lens);
  return HotPathStatus::kOk;
}

void HotSender::RepairReplica(std::uint32_t epoch, std::span<const hot::Key> keys,
                              std::span<const float> vals) {
  {
    std::lock_guard lock(impl_->mutex);
    impl_->counters.replica_values += impl_->replica.ApplyKeys(epoch, keys, vals).advanced;
    if (const auto reached = impl_->replica.MinEpoch()) impl_->Release(*reached);
  }
  impl_->replica_changed.notify_all();
  impl_->loop.Wake();
}

std::size_t HotSender::ApplyRepairPackets(std::span<const std::string> packets) {
  std::size_t taken = 0;
  {
    std::lock_guard lock(impl_->mutex);
    for (const std::string& packet : packets) {
      const std::span<const std::uint8_t> bytes(
          reinterpret_cast<const std::uint8_t*>(packet.data()), packet.size());
      wire::Message message;
      if (wire::Decode(bytes, &message) != wire::DecodeError::kNone ||
          message.header.type != wire::MessageType::kUpdate ||
          message.header.job_id != impl_->options.job_id) {
        impl_->loop.CountIgnored();
        continue;
      }
      const std::uint64_t forged = impl_->counters.forged_replicas;
      impl_->HandleReplica(bytes, message);
      if (impl_->counters.forged_replicas == forged) ++taken;
    }
    impl_->counters.repair_packets += taken;
    if (const auto reached = impl_->replica.MinEpoch()) impl_->Release(*reached);
  }
  impl_->replica_changed.notify_all();
  impl_->loop.Wake();
  return taken;
}

std::vector<hot::Key> HotSender::MissingReplicaKeys(std::uint32_t epoch) const {
  std::lock_guard lock(impl_->mutex);
  return impl_->replica.MissingKeys(epoch);
}

std::optional<std::uint32_t> HotSender::ReplicaEpoch() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->replica.MinEpoch();
}

HotSenderCounters HotSender::counters() const {
  std::lock_guard lock(impl_->mutex);
  HotSenderCounters counters = impl_->counters;
  CopyLoopCounters(impl_->loop.counters(), counters);
  return counters;
}

}  // namespace libra::hotpath
