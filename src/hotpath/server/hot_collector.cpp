#include "hotpath/server/hot_collector.h"

#include <algorithm>
#include <bit>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>

#include "hot/prefetch.h"
#include "hotpath/messages/hot_packets.h"
#include "hotpath/messages/written_keys.h"
#include "hotpath/node/engine_loop.h"
#include "hotpath/node/epoch_trace.h"
#include "hotpath/node/retry_clock.h"
#include "wire/fixed_point.h"

namespace libra::hotpath {
namespace {

using Clock = EngineClock::Clock;
// With nothing to wait for, the I/O thread still wakes this often.
constexpr auto kIdleWake = std::chrono::milliseconds(50);

std::vector<hot::Key> SortedOwnedKeys(const hot::HotSet& hot_set, std::span<const hot::Key> keys) {
  std::vector<hot::Key> sorted(keys.begin(), keys.end());
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    throw std::invalid_argument("hot collector: an owned key is listed twice");
  }
  for (const hot::Key key : sorted) {
    if (!hot_set.IsHot(key)) {
      throw std::invalid_argument("hot collector: owned key " + std::to_string(key) +
                                  " is not in the hot set");
    }
  }
  return sorted;
}

// The rows (cell index, the same in every register array) that hold the
// values of `keys`, ascending and without repeats.
std::vector<std::uint32_t> CollectRows(const hot::HotSet& hot_set, std::span<const hot::Key> keys) {
  std::vector<std::uint32_t> rows;
  for (const hot::Key key : keys) {
    for (const hot::CellAddress& cell : hot_set.CellsOf(hot_set.Find(key))) {
      rows.push_back(cell.index);
    }
  }
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

}  // namespace

std::uint32_t UpdateWindowFor(std::uint32_t requested, int receive_buffer_bytes) {
  constexpr std::uint32_t kFewest = 16;
  const std::size_t queued_replicas =
      static_cast<std::size_t>(std::max(receive_buffer_bytes, 0)) / (2 * wire::kMaxMessageBytes);
  const std::size_t fits = std::max<std::size_t>(kFewest, queued_replicas);
  return static_cast<std::uint32_t>(std::min<std::size_t>(requested, fits));
}

// The collector's protocol, run by its EngineLoop: the loop's mutex guards
// everything below but what construction fixes (the hot set, the options,
// the owned keys and the full plan).
struct HotCollector::Impl final : EngineHandler {
  Impl(std::shared_ptr<const hot::HotSet> hot_set_in, std::span<const hot::Key> owned,
       HotCollectorOptions options_in, EpochCallback callback)
      : hot_set(std::move(hot_set_in)),
        options(Checked(options_in, *hot_set)),
        loop(EngineLoopOptions{options.job_id, options.local, options.switch_address, options.clock,
                               options.socket, options.segmentation}),
        owned_keys(SortedOwnedKeys(*hot_set, owned)),
        codec(options.scale_bits),
        next_epoch(options.first_epoch),
        clock(loop.clock()),
        last_poll(clock.Now()),
        update_window(UpdateWindowFor(options.update_window, loop.receive_buffer_bytes())),
        update_retry(options.retry),
        retry(options.retry),
        on_epoch(std::move(callback)) {
    for (const hot::Key key : owned_keys) {
      lens.push_back(static_cast<int>(hot_set->Lookup(key).value_len));
      first_value.push_back(num_values);
      for (int v = 0; v < lens.back(); ++v) key_of_value.push_back(first_value.size() - 1);
      num_values += static_cast<std::uint32_t>(lens.back());
    }
    collect_header.type = wire::MessageType::kCollect;
    collect_header.job_id = options.job_id;
    collect_header.node_id = options.server_id;
    owned_index.assign(hot_set->size(), false);
    owned_entries = hot_set->LookupAll(owned_keys);
    for (const hot::HotSet::Entry& entry : owned_entries) {
      owned_index[entry.index] = true;
      for (const hot::CellAddress& cell : hot_set->CellsOf(entry)) cell_of_value.push_back(cell);
    }
    written_cells.resize(hot_set->layout().num_arrays);
    if (options.collect_by_row) by_row = PlanRows(collect_header);
    if (!by_row) {
      full_plan = CollectPlan{
          PackQueuedCells(collect_header, QueueHotCells(*hot_set, owned_keys, first_value), {})};
    }
    if (full_plan.packets.size() >= kCollectPollPacket) {
      throw std::invalid_argument("hot collector: more COLLECT packets than a seq can number");
    }
    loop.Start(*this, "hot-collector");
  }

  ~Impl() override { loop.Stop(); }

  static const HotCollectorOptions& Checked(const HotCollectorOptions& options,
                                            const hot::HotSet& hot_set) {
    options.retry.Validate();
    if (options.window == 0) throw std::invalid_argument("hot collector: window is 0");
    if (options.update_window == 0) {
      throw std::invalid_argument("hot collector: update_window is 0");
    }
    if (options.num_workers == 0) throw std::invalid_argument("hot collector: num_workers is 0");
    if (hot_set.layout().num_arrays > wire::kMaxSlots) {
      throw std::invalid_argument("hot collector: more register arrays than slots in a packet");
    }
    return options;
  }

  void OnMessage(const wire::Message& message, std::span<const std::uint8_t> bytes,
                 const UdpEndpoint& from) override;
  Clock::time_point Progress(Clock::time_point now, net::SendQueue& out) override;
  void HandleResult(const wire::Message& result);
  void HandleReady(std::uint32_t epoch);
  void HandleUpdateAck(const wire::Header& ack);
  void SendUpdates(Clock::time_point now, net::SendQueue& out);
  void Collect(Clock::time_point now, net::SendQueue& out);
  void SendCollect(std::uint32_t k, Clock::time_point now, bool resend, net::SendQueue& out);
  void DetectLosses(Clock::time_point now, net::SendQueue& out);
  void Start(net::SendQueue& out);
  void Finish(HotPathStatus status);
  // Appends owned key i, its length and its collected values to `epoch`.
  void AddWrittenKey(std::size_t i, CollectedEpoch* epoch) const;
  // Fetches into the cache what AddWrittenKey reads of owned key i but its
  // sums (whose place is itself read from memory).
  void PrefetchWrittenKey(std::size_t i) const;

  std::uint32_t plan_packets() const { return static_cast<std::uint32_t>(plan->packets.size()); }
  bool PlanRows(const wire::Header& header);
  void PlanWrittenKeys(std::span<const std::uint8_t> bitmap);

  // A request is late once the timeout has passed since it was sent, since
  // the last answer and since the last timeout (TCP restarts its timer on
  // every ACK and every retransmission the same way): a large window's
  // requests queue behind each other on a slow link, and while answers keep
  // coming the tail is waiting, not lost.
  Clock::time_point ExpiresAt(std::uint32_t k) const {
    return std::max({sent_at[k], last_answer, last_timeout}) + retry.timeout();
  }

  std::shared_ptr<const hot::HotSet> hot_set;
  const HotCollectorOptions options;
  // The socket, the I/O thread and the lock (engine_loop.h); API calls take
  // the lock briefly, the epoch callback runs without it.
  EngineLoop loop;

  // What this server collects, fixed at construction: its keys ascending and
  // the COLLECT packets that read all their cells (the epoch is patched in).
  const std::vector<hot::Key> owned_keys;
  const dataplane::FixedPointCodec codec;  // the job's F: a RESULT's sums to float32
  std::vector<int> lens;
  std::vector<std::uint32_t> first_value;
  std::vector<std::size_t> key_of_value;
  std::uint32_t num_values = 0;
  wire::Header collect_header;
  // COLLECTs to send: the packets, where each slot's value goes, and how
  // many of the packets, the first ones, read a whole row each (flag ROW,
  // one slot naming the row; the RESULT answers any of its arrays).
  struct CollectPlan : PackedValues {
    std::uint32_t row_packets = 0;
    bool ReadsRow(std::uint32_t k) const { return k < row_packets; }
    std::uint16_t FlagsOf(std::uint32_t k) const { return ReadsRow(k) ? wire::kFlagRow : 0; }
  };
  CollectPlan full_plan;
  // The full plan reads by row (one header and one slot per row of cells this
  // server owns whole) instead of one slot per cell; see PlanRows. Then
  // row_read_of[index] is the full plan's packet that reads row `index`.
  bool by_row = false;
  std::vector<std::uint32_t> row_read_of;
  // The plan of the epoch being collected: the full plan, or epoch_plan when
  // every worker said which keys it wrote (PlanWrittenKeys). When not
  // collecting, the full plan.
  std::vector<hot::HotSet::Entry> owned_entries;  // of each owned key
  std::vector<bool> owned_index;                  // by hot-set index: owned here
  std::vector<hot::CellAddress> cell_of_value;    // by value position, owned key after key
  CellQueues written_cells;                       // kept between epochs for their buffers
  std::vector<std::uint32_t> written_positions;   // PlanWrittenKeys' buffers, kept likewise
  std::vector<std::uint32_t> written_in_row;
  CollectPlan epoch_plan;
  // The epoch epoch_plan was made for when the last worker's report came
  // in before READY (AddWrittenKeys): Start then sends it as it is.
  std::optional<std::uint32_t> planned_epoch;
  CollectPlan* plan = &full_plan;

  std::mutex& mutex = loop.mutex();
  std::uint32_t next_epoch;                 // the epoch to collect (and deliver) next
  std::optional<std::uint32_t> ready_upto;  // newest epoch known complete
  bool collecting = false;
  std::vector<bool> answered;
  Clock::time_point collect_started;
  Clock::time_point last_answer;  // of the epoch being collected
  std::vector<Clock::time_point> sent_at;
  // Loss detection by order (see DetectLosses): every send of a COLLECT gets
  // the next number; `in_flight` lists the sends oldest first.
  struct Send {
    std::uint64_t order;
    std::uint32_t k;
  };
  std::deque<Send> in_flight;
  std::vector<std::uint64_t> first_send_order;
  std::vector<std::uint64_t> last_send_order;
  std::vector<std::uint8_t> attempts;  // resends of each packet so far (its seq's high bits)
  std::uint64_t sends = 0;
  std::uint64_t newest_answered_send = 0;  // the latest send known to be answered
  // The last timeout restarts every request's timer, as TCP's does.
  Clock::time_point last_timeout;
  std::uint32_t next_to_send = 0;
  std::uint32_t answered_count = 0;
  // The epoch's sums as the RESULTs carry them, in fixed point (value by
  // value, as `first_value` places them); converted to float32 in Finish.
  std::vector<std::int32_t> fixed_sums;
  // Bit i: some cell of owned key i was written in the epoch. A bitmap of
  // words, so that Finish visits the written keys only, not every owned one.
  std::vector<std::uint64_t> key_written;
  std::vector<std::size_t> written_keys;  // Finish's list of the set bits (kept for its buffer)
  std::vector<bool> key_saturated;
  const EngineClock& clock;  // the timers' time (HotCollectorOptions::clock)
  Clock::time_point last_poll;
  // UPDATEs on the wire unACKed at most (UpdateWindowFor this socket).
  const std::uint32_t update_window;
  // UPDATE packets not yet ACKed by the switch, oldest first: at most
  // `update_window` of them on the wire, resent when their ACK is late.
  struct PendingUpdate {
    EncodedPacket packet;
    std::uint16_t flags = 0;  // LAST on an epoch's last packet
    std::uint32_t epoch = 0;
    std::uint32_t seq = 0;
    bool sent = false;
    bool acked = false;
    Clock::time_point sent_at;  // of its latest send
    // Send numbers (update_sends): its latest send, its first, its first
    // resend (0: never resent; equal to `order` when resent once). An ACK
    // answers a send no earlier than the first send, or than the first
    // resend when it is flagged RETRANSMISSION.
    std::uint64_t order = 0;
    std::uint64_t first_order = 0;
    std::uint64_t first_resend_order = 0;
  };
  std::uint64_t update_sends = 0;
  std::uint64_t newest_acked_update = 0;  // the latest send known ACKed
  std::deque<PendingUpdate> updates;
  // Copies of ACKed LAST UPDATEs, sent with the next UPDATEs, and the
  // (epoch, seq) of the latest ones sent, whose ACKs are expected.
  std::vector<PendingUpdate> tail_copies_due;
  std::deque<std::pair<std::uint32_t, std::uint32_t>> tail_copies_sent;
  // The latest kKeptStreams epochs' UPDATE streams as published, for
  // workers' packet repairs (PublishedPackets).
  std::map<std::uint32_t, std::vector<EncodedPacket>> kept_streams;
  RetryClock update_retry;
  Clock::time_point last_update_ack;
  // Late, like a COLLECT: the timeout has passed since it was sent, since
  // the last ACK and since the last expiry.
  Clock::time_point last_update_timeout;
  Clock::time_point UpdateExpiresAt(const PendingUpdate& update) const {
    return std::max({update.sent_at, last_update_ack, last_update_timeout}) +
           update_retry.timeout();
  }
  // Workers' reports of the keys they wrote, by epoch: the union so far (a
  // bitmap over owned_keys) and who reported. READY of next_epoch came at
  // ready_since.
  struct KeyReports {
    std::vector<std::uint8_t> written;
    std::vector<bool> reported;
    std::uint32_t workers = 0;
  };
  std::map<std::uint32_t, KeyReports> key_reports;
  std::optional<Clock::time_point> ready_since;
  bool WaitingForKeyReports(Clock::time_point now) const;
  // How long after the last poll to ask again whether next_epoch is READY:
  // ready_poll while some worker has not said it pushes the epoch (its
  // WRITTEN_KEYS comes just before its DATA), a few round trips once every
  // one has (then READY is due, and a lost one costs this, not ready_poll).
  Clock::duration PollInterval() const;

  RetryClock retry;
  HotCollectorCounters counters;
  EpochCallback on_epoch;
};

// The rows (cell index i across every array) that hold this server's values.
// When no other server's value shares them, each row is read with one
// COLLECT of a single slot flagged ROW: 28 bytes instead of 8 per cell, and
// the switch answers the row's written cells as usual. With rows shared by
// servers (placement that ignores owners) a row would return other servers'
// sums, so the collector keeps one slot per cell.
bool HotCollector::Impl::PlanRows(const wire::Header& header) {
  const std::uint32_t num_arrays = hot_set->layout().num_arrays;
  std::vector<std::int64_t> position_of_key(hot_set->size(), -1);
  for (std::size_t i = 0; i < owned_keys.size(); ++i) {
    position_of_key[hot_set->Find(owned_keys[i])] = first_value[i];
  }
  const std::vector<std::uint32_t> rows = CollectRows(*hot_set, owned_keys);
  CollectPlan row_plan;
  row_plan.value_of_slot.assign(rows.size() * num_arrays, kNoValue);
  for (std::size_t k = 0; k < rows.size(); ++k) {
    for (std::uint32_t j = 0; j < num_arrays; ++j) {
      const auto owner = hot_set->OwnerOf(hot::CellAddress{j, rows[k]});
      if (!owner) continue;
      if (position_of_key[owner->key_index] < 0) return false;  // another server's value
      row_plan.value_of_slot[k * num_arrays + j] =
          static_cast<std::uint32_t>(position_of_key[owner->key_index]) + owner->offset;
    }
    wire::Header request = header;
    request.flags = wire::kFlagRow;
    request.seq = static_cast<std::uint32_t>(k);
    request.slot_count = 1;
    const wire::Slot row{true, false, rows[k], 0};
    EncodedPacket packet;
    packet.length = static_cast<std::uint16_t>(wire::Encode(request, {&row, 1}, packet.bytes));
    row_plan.packets.push_back(packet);
  }
  row_plan.row_packets = static_cast<std::uint32_t>(rows.size());
  full_plan = std::move(row_plan);
  row_read_of.assign(rows.empty() ? 0 : rows.back() + 1, kNoValue);
  for (std::size_t k = 0; k < rows.size(); ++k)
    row_read_of[rows[k]] = static_cast<std::uint32_t>(k);
  return true;
}

// The cells of the keys some worker wrote. A row of this server's own
// (by_row) of which at least half the cells were written is read whole: one
// COLLECT of a single slot (28 bytes) whose RESULT is at least half full.
// The other written cells are packed as the workers' DATA are: packet k takes
// the k-th such cell of every array, so V of them cost about V / P COLLECTs
// (and as many RESULTs) however they are spread over rows, where reading
// their rows would cost one per row touched (a sparse epoch writes a few
// cells of each). A packed cell costs 8 bytes of a COLLECT for the 4 of its
// sum: a dense epoch packed (DeepFM, whose keys fill their rows) sent twice
// the bytes it read back, in about as many packets as reading its rows
// (docs/PERFORMANCE.md, "Reading mostly written rows whole"). The cells are
// queued in key order, as the bitmap gives them: O(written values), reading
// the owned cells in sequence. (Row order, as the workers send DATA, costs a
// pass over every owned cell or a sort, for an epoch that writes a tenth of
// them; a COLLECT reads its cells in any order.)
void HotCollector::Impl::PlanWrittenKeys(std::span<const std::uint8_t> bitmap) {
  written_positions.clear();
  for (std::size_t byte = 0; byte < bitmap.size(); ++byte) {
    for (unsigned bits = bitmap[byte]; bits != 0; bits &= bits - 1) {
      const std::size_t i = byte * 8 + static_cast<std::size_t>(std::countr_zero(bits));
      if (i >= owned_keys.size()) break;  // MergeKeySet sets no bit past the owned keys
      for (std::uint32_t v = first_value[i];
           v < first_value[i] + static_cast<std::uint32_t>(lens[i]); ++v) {
        written_positions.push_back(v);
      }
    }
  }
  const std::uint32_t num_arrays = hot_set->layout().num_arrays;
  epoch_plan.packets.clear();
  epoch_plan.value_of_slot.clear();
  epoch_plan.row_packets = 0;
  written_in_row.assign(by_row ? full_plan.packets.size() : 0, 0);
  auto dense = [&](std::uint32_t v) {
    return by_row && 2 * written_in_row[row_read_of[cell_of_value[v].index]] >= num_arrays;
  };
  if (by_row) {
    for (const std::uint32_t v : written_positions) {
      ++written_in_row[row_read_of[cell_of_value[v].index]];
    }
    for (std::size_t k = 0; k < written_in_row.size(); ++k) {
      if (2 * written_in_row[k] < num_arrays) continue;
      epoch_plan.packets.push_back(full_plan.packets[k]);
      const auto row_slots = full_plan.value_of_slot.begin() + k * num_arrays;
      epoch_plan.value_of_slot.insert(epoch_plan.value_of_slot.end(), row_slots,
                                      row_slots + num_arrays);
      ++epoch_plan.row_packets;
    }
  }
  for (std::vector<std::uint64_t>& queue : written_cells) queue.clear();
  for (const std::uint32_t v : written_positions) {
    if (dense(v)) continue;
    written_cells[cell_of_value[v].array].push_back(QueuedCell(cell_of_value[v].index, v));
  }
  const PackedValues packed = PackQueuedCells(collect_header, written_cells, {});
  epoch_plan.packets.insert(epoch_plan.packets.end(), packed.packets.begin(), packed.packets.end());
  epoch_plan.value_of_slot.insert(epoch_plan.value_of_slot.end(), packed.value_of_slot.begin(),
                                  packed.value_of_slot.end());
}

Clock::time_point HotCollector::Impl::Progress(Clock::time_point now, net::SendQueue& out) {
  SendUpdates(now, out);
  Collect(now, out);
  Clock::time_point deadline = now + kIdleWake;
  if (collecting) {
    for (std::uint32_t k = 0; k < next_to_send; ++k) {
      if (!answered[k]) deadline = std::min(deadline, ExpiresAt(k));
    }
  } else if (ready_since) {
    deadline = std::min(deadline, *ready_since + options.written_keys_grace);
  } else if (!full_plan.packets.empty()) {
    deadline = std::min(deadline, last_poll + PollInterval());
  }
  for (const PendingUpdate& update : updates) {
    if (!update.sent) break;
    if (!update.acked) deadline = std::min(deadline, UpdateExpiresAt(update));
  }
  return deadline;
}

void HotCollector::Impl::OnMessage(const wire::Message& message, std::span<const std::uint8_t>,
                                   const UdpEndpoint&) {
  if (message.header.node_id != options.server_id) {
    loop.CountIgnored();
    return;
  }
  if (message.header.type == wire::MessageType::kResult) {
    HandleResult(message);
  } else if (message.header.type == wire::MessageType::kReady) {
    ++counters.ready_received;
    HandleReady(message.header.epoch);
  } else if (message.header.type == wire::MessageType::kAck) {
    HandleUpdateAck(message.header);
  } else {
    loop.CountIgnored();
  }
}

void HotCollector::Impl::HandleUpdateAck(const wire::Header& ack) {
  for (PendingUpdate& update : updates) {
    if (!update.sent) break;
    if (update.acked || update.epoch != ack.epoch || update.seq != ack.seq) continue;
    update.acked = true;
    // Which send the ACK answers: the switch echoes RETRANSMISSION, so an
    // unflagged ACK answers the first send and a flagged one a resend (the
    // only one, if there was one). The switch ACKs in arrival order, so
    // UPDATEs sent before that send and still unACKed are lost (SendUpdates).
    // Before the echo, a resend's ACK showed nothing, and a run of UPDATEs
    // lost in a full queue was resent one per backed-off expiry: 7.7 s in
    // one epoch of a 20 Mbit/s cluster (docs/PERFORMANCE.md).
    const bool resent = update.first_resend_order != 0;
    const bool answers_resend = resent && (ack.flags & wire::kFlagRetransmission) != 0;
    newest_acked_update = std::max(newest_acked_update,
                                   answers_resend ? update.first_resend_order : update.first_order);
    const Clock::time_point now = clock.Now();
    // A round trip when the answered send is known (Karn's rule otherwise).
    if (!resent || (answers_resend && update.order == update.first_resend_order)) {
      update_retry.OnRttSample(
          std::chrono::duration_cast<std::chrono::microseconds>(now - update.sent_at));
    }
    update_retry.OnProgress();
    last_update_ack = now;
    ++counters.update_acks;
    if ((update.flags & wire::kFlagLast) != 0) {
      PendingUpdate copy = update;
      copy.packet.SetFlags(update.flags | wire::kFlagRetransmission);
      for (std::uint32_t i = 0; i < options.tail_copies; ++i) tail_copies_due.push_back(copy);
    }
    return;
  }
  const auto copy = std::find(tail_copies_sent.begin(), tail_copies_sent.end(),
                              std::make_pair(ack.epoch, ack.seq));
  if (copy != tail_copies_sent.end()) return;  // the switch took a tail copy
  loop.CountIgnored();                         // a late ACK of a resend, or not ours
}

// UPDATEs go out as ACKs come back, at most `update_window` unACKed. One
// still unACKed once UPDATEs sent three or more sends after it have been
// ACKed (the switch ACKs them in arrival order: it was lost, or its ACK
// was) is resent at once, so that the workers' REPLICA stream gets it
// within a round trip or two. When ACKs stop for the timeout, the expiry
// resends the oldest unACKed UPDATE only and restarts every UPDATE's timer:
// the others are lost, and a later one's ACK shows it by order, or they
// wait in a loaded link's queue behind it, where a copy of each would only
// lengthen the queue (resending every late one, a window of 512 cost 538
// resends in 12 epochs of a 100 Mbit/s cluster with 1 % loss). When the
// switch stops answering, the rest are dropped: the workers find the
// switch dead by their own probes.
void HotCollector::Impl::SendUpdates(Clock::time_point now, net::SendQueue& out) {
  // Tail copies are sent once, outside the window: nothing waits for their
  // ACKs (the original's ACK said the switch has the stream).
  for (const PendingUpdate& copy : tail_copies_due) {
    out.PushView(copy.packet.view(), options.switch_address);
    tail_copies_sent.emplace_back(copy.epoch, copy.seq);
    if (tail_copies_sent.size() > 8) tail_copies_sent.pop_front();
    ++counters.update_tail_copies;
  }
  tail_copies_due.clear();
  constexpr std::uint64_t kReorderTolerance = 3;
  while (!updates.empty() && updates.front().acked) updates.pop_front();
  std::uint32_t outstanding = 0;
  for (PendingUpdate& update : updates) {
    if (update.acked) continue;
    if (!update.sent) {
      if (outstanding >= update_window) break;
      out.PushView(update.packet.view(), options.switch_address);
      if (update.seq == 0) TraceEpoch("update_sent", options.server_id, update.epoch);
      update.sent = true;
      update.sent_at = now;
      update.order = update.first_order = ++update_sends;
      ++outstanding;
      continue;
    }
    ++outstanding;
    const bool lost_by_order = update.order + kReorderTolerance <= newest_acked_update;
    if (!lost_by_order && now < UpdateExpiresAt(update)) continue;
    if (lost_by_order) {
      ++counters.update_fast_retransmissions;
    } else {
      // Restarts every UPDATE's timer: the later ones are not late yet.
      last_update_timeout = now;
      if (!update_retry.OnTimeout()) {
        counters.updates_abandoned += updates.size();
        updates.clear();
        return;
      }
    }
    update.packet.SetFlags(update.flags | wire::kFlagRetransmission);
    out.PushView(update.packet.view(), options.switch_address);
    update.sent_at = now;
    update.order = ++update_sends;
    if (update.first_resend_order == 0) update.first_resend_order = update.order;
    ++counters.update_retransmissions;
  }
}

void HotCollector::Impl::HandleReady(std::uint32_t epoch) {
  if (epoch < next_epoch) return;  // a READY resent or for an epoch already done
  if (!ready_upto || epoch > *ready_upto) TraceEpoch("ready", options.server_id, epoch);
  ready_upto = std::max(ready_upto.value_or(epoch), epoch);
  if (!full_plan.packets.empty()) return;
  // Nothing to read: every ready epoch is complete at once.
  while (next_epoch <= *ready_upto) Finish(HotPathStatus::kOk);
}

void HotCollector::Impl::HandleResult(const wire::Message& result) {
  const wire::Header& header = result.header;
  const std::uint32_t k = header.seq & kCollectSeqPacketMask;
  const std::uint32_t attempt = header.seq >> kCollectSeqPacketBits;
  const bool poll = k == kCollectPollPacket;
  if (header.epoch != next_epoch || (!poll && (!collecting || k >= plan_packets()))) {
    ++counters.duplicate_results;  // an answer to a resend of an epoch already done
    return;
  }
  retry.OnProgress();
  if ((header.flags & wire::kFlagNotReady) != 0) {
    // READY follows the last FIN, so only a poll, or a READY for a later
    // epoch than this server expects (a misconfigured first_epoch), can be
    // early: go back to waiting for READY and polling.
    ++counters.not_ready;
    if (collecting && answered_count == 0) {
      collecting = false;
      ready_upto.reset();
      last_poll = clock.Now();
    }
    return;
  }
  if (poll) {
    // The epoch is complete although its READY was lost: Progress collects it.
    if (!collecting) ready_upto = std::max(ready_upto.value_or(next_epoch), next_epoch);
    return;
  }
  if (answered[k]) {
    ++counters.duplicate_results;
    return;
  }
  // The RESULT holds the written cells only, each slot naming the COLLECT
  // slot it answers, in increasing order; anything else is not the switch's.
  const std::uint32_t num_arrays = hot_set->layout().num_arrays;
  const std::uint32_t asked_slots = plan->ReadsRow(k) ? num_arrays : plan->packets[k].slot_count();
  std::uint32_t previous = 0;
  for (std::uint32_t i = 0; i < header.slot_count; ++i) {
    const wire::Slot& slot = result.slots[i];
    const bool in_order = i == 0 || slot.index > previous;
    if (!slot.valid || slot.index >= asked_slots || !in_order ||
        plan->value_of_slot[std::size_t{k} * num_arrays + slot.index] == kNoValue) {
      loop.CountIgnored();
      return;
    }
    previous = slot.index;
    // The slots' values land at scattered positions of the epoch's arrays
    // (a RESULT answers one row of many keys'): start those reads now, so
    // that the loop below does not wait on each in turn.
    const std::uint32_t position = plan->value_of_slot[std::size_t{k} * num_arrays + slot.index];
    hot::PrefetchForRead(key_of_value.data() + position);
    hot::PrefetchForRead(fixed_sums.data() + position);
  }
  answered[k] = true;
  // The seq says which send of k this answers: the latest, or else (an
  // older send, or an attempt never made) the first, which says least about
  // which later sends are lost.
  newest_answered_send = std::max(
      newest_answered_send, attempt == attempts[k] ? last_send_order[k] : first_send_order[k]);
  // An answer to a resent request is no RTT sample (Karn).
  if (k < next_to_send && attempts[k] == 0) {
    retry.OnRttSample(
        std::chrono::duration_cast<std::chrono::microseconds>(clock.Now() - sent_at[k]));
  }
  ++answered_count;
  ++counters.results;
  last_answer = clock.Now();
  for (std::uint32_t i = 0; i < header.slot_count; ++i) {
    const wire::Slot& slot = result.slots[i];
    const std::uint32_t position = plan->value_of_slot[std::size_t{k} * num_arrays + slot.index];
    fixed_sums[position] = static_cast<std::int32_t>(slot.value);
    const std::size_t key = key_of_value[position];
    key_written[key / 64] |= std::uint64_t{1} << (key % 64);
    ++counters.written_values;
    if (slot.saturated) {
      key_saturated[key_of_value[position]] = true;
      ++counters.saturated_values;
    }
  }
  if (answered_count == plan_packets()) Finish(HotPathStatus::kOk);
}

void HotCollector::Impl::Start(net::SendQueue& out) {
  // `out` may still point at the plans' packets with the previous epoch in
  // them.
  out.Flush();
  // Every worker said which keys it wrote: the others hold nothing of this
  // epoch and are not read.
  plan = &full_plan;
  const auto reports = key_reports.find(next_epoch);
  if (reports != key_reports.end() && reports->second.workers == options.num_workers) {
    if (planned_epoch != next_epoch) PlanWrittenKeys(reports->second.written);
    planned_epoch.reset();
    // (By row it never has more packets than reading every row, and reads
    // no row that was not written.)
    if (epoch_plan.packets.size() <= full_plan.packets.size()) {
      counters.packets_saved += full_plan.packets.size() - epoch_plan.packets.size();
      plan = &epoch_plan;
    }
    ++counters.epochs_by_written_keys;
  } else if (options.written_keys_grace.count() > 0) {
    ++counters.epochs_without_key_reports;
  }
  key_reports.erase(key_reports.begin(), key_reports.upper_bound(next_epoch));
  for (std::uint32_t k = 0; k < plan_packets(); ++k) {
    plan->packets[k].SetEpoch(next_epoch);
    plan->packets[k].SetFlags(plan->FlagsOf(k));
  }
  collecting = true;
  collect_started = clock.Now();
  TraceEpoch("collecting", options.server_id, next_epoch);
  last_answer = collect_started;
  answered.assign(plan_packets(), false);
  sent_at.assign(plan_packets(), Clock::time_point{});
  in_flight.clear();
  first_send_order.assign(plan_packets(), 0);
  last_send_order.assign(plan_packets(), 0);
  attempts.assign(plan_packets(), 0);
  newest_answered_send = 0;
  last_timeout = Clock::time_point{};
  next_to_send = 0;
  answered_count = 0;
  fixed_sums.assign(num_values, 0);
  key_written.assign((owned_keys.size() + 63) / 64, 0);
  key_saturated.assign(owned_keys.size(), false);
  ready_since.reset();
  // No worker wrote any of this server's keys.
  if (plan_packets() == 0) Finish(HotPathStatus::kOk);
}

bool HotCollector::Impl::WaitingForKeyReports(Clock::time_point now) const {
  if (options.written_keys_grace.count() == 0) return false;
  const auto reports = key_reports.find(next_epoch);
  if (reports != key_reports.end() && reports->second.workers == options.num_workers) return false;
  return ready_since && now < *ready_since + options.written_keys_grace;
}

Clock::duration HotCollector::Impl::PollInterval() const {
  const auto reports = key_reports.find(next_epoch);
  if (options.written_keys_grace.count() == 0 || reports == key_reports.end() ||
      reports->second.workers < options.num_workers) {
    return options.ready_poll;
  }
  constexpr Clock::duration kShortest = std::chrono::milliseconds(2);
  return std::min<Clock::duration>(options.ready_poll,
                                   std::max<Clock::duration>(kShortest, 4 * retry.smoothed_rtt()));
}

void HotCollector::Impl::AddWrittenKey(std::size_t i, CollectedEpoch* epoch) const {
  epoch->keys.push_back(owned_keys[i]);
  epoch->entries.push_back(owned_entries[i]);
  epoch->lens.push_back(lens[i]);
  const auto first = fixed_sums.begin() + first_value[i];
  epoch->fixed.insert(epoch->fixed.end(), first, first + lens[i]);
  for (auto sum = first; sum != first + lens[i]; ++sum) {
    epoch->vals.push_back(std::bit_cast<float>(codec.ToFloatBits(*sum)));
  }
  if (key_saturated[i]) epoch->saturated_keys.push_back(owned_keys[i]);
}

void HotCollector::Impl::PrefetchWrittenKey(std::size_t i) const {
  hot::PrefetchForRead(owned_keys.data() + i);
  hot::PrefetchForRead(owned_entries.data() + i);
  hot::PrefetchForRead(lens.data() + i);
  hot::PrefetchForRead(first_value.data() + i);
}

void HotCollector::Impl::Finish(HotPathStatus status) {
  TraceEpoch("collected", options.server_id, next_epoch);
  CollectedEpoch epoch;
  epoch.epoch = next_epoch;
  epoch.status = status;
  epoch.num_merged = options.num_workers;
  epoch.from_switch = true;
  if (status == HotPathStatus::kOk) {
    written_keys.clear();
    for (std::size_t w = 0; w < key_written.size(); ++w) {
      for (std::uint64_t bits = key_written[w]; bits != 0; bits &= bits - 1) {
        written_keys.push_back(w * 64 + static_cast<std::size_t>(std::countr_zero(bits)));
      }
    }
    // A sparse epoch writes a key here and there among the owned ones, so
    // each key's reads of owned_keys, owned_entries, lens and first_value
    // would miss: they are fetched kAhead keys on, and its sums (which
    // first_value places) half as far, once that read is in.
    constexpr std::size_t kAhead = 8;
    epoch.keys.reserve(written_keys.size());
    epoch.entries.reserve(written_keys.size());
    epoch.lens.reserve(written_keys.size());
    for (std::size_t n = 0; n < written_keys.size(); ++n) {
      if (n + kAhead < written_keys.size()) PrefetchWrittenKey(written_keys[n + kAhead]);
      if (n + kAhead / 2 < written_keys.size()) {
        hot::PrefetchForRead(fixed_sums.data() + first_value[written_keys[n + kAhead / 2]]);
      }
      AddWrittenKey(written_keys[n], &epoch);
    }
    ++counters.epochs_collected;
  } else {
    ++counters.epochs_failed;
  }
  // Delivered after the turn, without the lock: the callback may publish.
  loop.Notify([this, epoch = std::move(epoch)]() mutable { on_epoch(std::move(epoch)); });
  if (collecting) {
    counters.collect_micros += static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(clock.Now() - collect_started)
            .count());
  }
  fixed_sums.clear();
  collecting = false;
  plan = &full_plan;
  ++next_epoch;
  retry.OnProgress();
}

void HotCollector::Impl::Collect(Clock::time_point now, net::SendQueue& out) {
  if (full_plan.packets.empty()) return;
  if (!collecting) {
    if (ready_upto && *ready_upto >= next_epoch) {
      if (!ready_since) ready_since = now;
      if (WaitingForKeyReports(now)) return;
      Start(out);
      // No worker wrote any of this server's rows: on to the next epoch.
      if (!collecting) return Collect(now, out);
    } else {
      if (now < last_poll + PollInterval()) return;
      // Ask with the first packet of the full plan: NOT_READY, or READY and
      // values (not taken) if READY was lost.
      full_plan.packets[0].SetEpoch(next_epoch);
      full_plan.packets[0].SetFlags(full_plan.FlagsOf(0));
      full_plan.packets[0].SetSeq(kCollectPollPacket);
      out.PushView(full_plan.packets[0].view(), options.switch_address);
      last_poll = now;
      ++counters.ready_polls;
      return;
    }
  }
  DetectLosses(now, out);
  // An expiry resends the oldest unanswered request only (by first send, so
  // again the same one if it expires again, as TCP does), and restarts every
  // timer. If the others were lost too, the answer to that resend comes
  // after requests it overtakes and DetectLosses resends them all; if they
  // were only queued (a loaded link), their answers come first and nothing
  // else is resent.
  std::uint32_t outstanding = 0;
  std::optional<std::uint32_t> oldest_expired;
  for (std::uint32_t k = 0; k < next_to_send; ++k) {
    if (answered[k]) continue;
    ++outstanding;
    if (now < ExpiresAt(k)) continue;
    if (!oldest_expired || first_send_order[k] < first_send_order[*oldest_expired]) {
      oldest_expired = k;
    }
  }
  if (oldest_expired) {
    ++counters.timeouts;
    if (!retry.OnTimeout()) {
      Finish(HotPathStatus::kSwitchUnresponsive);
      return;
    }
    last_timeout = now;
    SendCollect(*oldest_expired, now, /*resend=*/true, out);
  }
  // New requests, at most `window` outstanding; a packet answered by a poll
  // is not asked again.
  for (; outstanding < options.window && next_to_send < plan_packets(); ++next_to_send) {
    if (answered[next_to_send]) continue;
    SendCollect(next_to_send, now, /*resend=*/false, out);
    ++outstanding;
  }
}

void HotCollector::Impl::SendCollect(std::uint32_t k, Clock::time_point now, bool resend,
                                     net::SendQueue& out) {
  if (resend) {
    plan->packets[k].SetFlags(plan->FlagsOf(k) | wire::kFlagRetransmission);
    if (attempts[k] < 255) ++attempts[k];
    ++counters.retransmissions;
  } else {
    ++counters.collect_packets;
    if (plan->ReadsRow(k)) ++counters.row_collect_packets;
  }
  plan->packets[k].SetSeq(k | std::uint32_t{attempts[k]} << kCollectSeqPacketBits);
  out.PushView(plan->packets[k].view(), options.switch_address);
  sent_at[k] = now;
  last_send_order[k] = ++sends;
  if (!resend) first_send_order[k] = sends;
  in_flight.push_back({sends, k});
}

// The switch answers COLLECTs in the order they arrive, and between it and
// this server each way is one path of FIFO queues: answers come back in the
// order the requests were sent. So a request still unanswered once requests
// sent kReorderTolerance or more sends after it have been answered was lost,
// or its RESULT was (a shaper's queue overflowed): it is resent now rather
// than after the timeout, which on a loaded link is hundreds of
// milliseconds of an idle collector. The tolerance keeps a little
// reordering elsewhere from resending much; a needless resend costs one
// idempotent read.
void HotCollector::Impl::DetectLosses(Clock::time_point now, net::SendQueue& out) {
  constexpr std::uint64_t kReorderTolerance = 3;
  while (!in_flight.empty() &&
         in_flight.front().order + kReorderTolerance <= newest_answered_send) {
    const Send send = in_flight.front();
    in_flight.pop_front();
    // Answered, or sent again since (that send has its own entry).
    if (answered[send.k] || last_send_order[send.k] != send.order) continue;
    ++counters.fast_retransmissions;
    SendCollect(send.k, now, /*resend=*/true, out);
  }
}

HotCollector::HotCollector(std::shared_ptr<const hot::HotSet> hot_set,
                           std::span<const hot::Key> owned_keys, HotCollectorOptions options,
                           EpochCallback on_epoch) {
  if (hot_set == nullptr) throw std::invalid_argument("hot collector: no hot set");
  if (!on_epoch) throw std::invalid_argument("hot collector: no epoch callback");
  impl_ = std::make_unique<Impl>(std::move(hot_set), owned_keys, options, std::move(on_epoch));
}

HotCollector::~HotCollector() = default;

UdpEndpoint HotCollector::local() const { return impl_->loop.local(); }

bool HotCollector::collects_by_row() const { return impl_->by_row; }

std::uint32_t HotCollector::update_window() const { return impl_->update_window; }

void HotCollector::PublishUpdate(std::uint32_t epoch, std::span<const hot::Key> keys,
                                 std::span<const float> vals,
                                 std::span<const hot::HotSet::Entry> entries) {
  Impl& impl = *impl_;
  std::vector<hot::HotSet::Entry> looked_up;  // each key looked up once, if not given
  entries = impl.hot_set->EntriesOf(keys, entries, &looked_up);
  const std::vector<std::uint32_t> first_value = CheckHotValues(keys, entries, vals, {});
  // Each key owned and given once, checked by hot-set index in O(keys): an
  // epoch publishes a few of the owned keys.
  std::vector<bool> seen(impl.hot_set->size(), false);
  for (const hot::HotSet::Entry& entry : entries) {
    if (!impl.owned_index[entry.index] || seen[entry.index]) {
      throw std::invalid_argument(
          "hot update: the keys must be the server's own hot keys, each at most once (" +
          std::to_string(keys.size()) + " given, " + std::to_string(impl.owned_keys.size()) +
          " owned)");
    }
    seen[entry.index] = true;
  }
  wire::Header header;
  header.type = wire::MessageType::kUpdate;
  header.job_id = impl.options.job_id;
  header.node_id = impl.options.server_id;
  header.epoch = epoch;
  std::vector<EncodedPacket> packets =
      PackUpdate(*impl.hot_set, header, keys, first_value, vals, entries);
  if (packets.empty()) {
    // Nothing changed: one empty UPDATE still tells the workers the epoch is done.
    EncodedPacket empty;
    empty.length = static_cast<std::uint16_t>(wire::EncodeUpdate(header, {}, empty.bytes));
    packets.push_back(empty);
  }
  packets.back().SetFlags(wire::kFlagLast);
  for (EncodedPacket& packet : packets) {
    SignUpdate(impl.options.update_key, std::span(packet.bytes.data(), packet.length));
  }
  {
    std::lock_guard lock(impl.mutex);
    for (const EncodedPacket& packet : packets) {
      Impl::PendingUpdate update;
      update.packet = packet;
      update.flags = &packet == &packets.back() ? wire::kFlagLast : 0;
      update.epoch = epoch;
      update.seq = packet.seq();
      impl.updates.push_back(update);
    }
    impl.counters.update_packets += packets.size();
    impl.kept_streams[epoch] = std::move(packets);
    while (impl.kept_streams.size() > kKeptStreams)
      impl.kept_streams.erase(impl.kept_streams.begin());
  }
  impl.loop.Wake();
}

std::vector<std::string> HotCollector::PublishedPackets(std::uint32_t epoch,
                                                        std::span<const std::uint32_t> seqs,
                                                        std::uint32_t tail_from) const {
  Impl& impl = *impl_;
  std::lock_guard lock(impl.mutex);
  std::vector<std::string> out;
  const auto stream = impl.kept_streams.find(epoch);
  if (stream == impl.kept_streams.end()) return out;
  const std::vector<EncodedPacket>& packets = stream->second;
  // Each packet at most once, in stream order, however the request repeats
  // numbers: the answer is never larger than the stream.
  std::vector<bool> wanted(packets.size(), false);
  for (const std::uint32_t seq : seqs) {
    if (seq < packets.size()) wanted[seq] = true;
  }
  for (std::uint32_t seq = tail_from; seq < packets.size(); ++seq) wanted[seq] = true;
  for (std::uint32_t seq = 0; seq < packets.size(); ++seq) {
    if (!wanted[seq]) continue;
    const std::span<const std::uint8_t> bytes = packets[seq].view();
    out.emplace_back(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }
  impl.counters.repair_packets_answered += out.size();
  return out;
}

void HotCollector::AddWrittenKeys(std::uint32_t epoch, std::uint32_t worker,
                                  std::span<const std::uint8_t> key_set) {
  Impl& impl = *impl_;
  {
    std::lock_guard lock(impl.mutex);
    // Reports run at most a few epochs ahead of the one being collected;
    // anything further is not a report of this job.
    constexpr std::uint32_t kMaxEpochsAhead = 64;
    const bool current = epoch > impl.next_epoch || (epoch == impl.next_epoch && !impl.collecting);
    if (!current || epoch - impl.next_epoch > kMaxEpochsAhead ||
        worker >= impl.options.num_workers) {
      ++impl.counters.key_reports_ignored;
      return;
    }
    const auto universe = static_cast<std::uint32_t>(impl.owned_keys.size());
    const bool fresh = impl.key_reports.count(epoch) == 0;
    Impl::KeyReports& reports = impl.key_reports[epoch];
    if (fresh) {
      reports.written.assign(KeyBitmapBytes(universe), 0);
      reports.reported.assign(impl.options.num_workers, false);
    }
    if (!MergeKeySet(key_set, universe, reports.written)) {
      if (fresh) impl.key_reports.erase(epoch);
      ++impl.counters.key_reports_ignored;
      return;
    }
    if (!reports.reported[worker]) {
      reports.reported[worker] = true;
      ++reports.workers;
    }
    ++impl.counters.key_reports;
    // The last report of the epoch the collector waits for comes while the
    // workers' DATA are still on their way (each sends its report first):
    // planning the COLLECTs now takes that work off the path from READY to
    // the sums, which every worker's next push waits for.
    if (epoch != impl.next_epoch || impl.collecting || reports.workers < impl.options.num_workers) {
      // Nothing the I/O thread decides changes before the epoch's last
      // report (waking it costs a thread switch an epoch a worker).
      return;
    }
    TraceEpoch("reports_in", impl.options.server_id, epoch);
    impl.PlanWrittenKeys(reports.written);
    impl.planned_epoch = epoch;
  }
  // The epoch may be READY and waiting for this report, and its READY
  // polls come sooner once every worker has reported (PollInterval).
  impl.loop.Wake();
}

HotCollectorCounters HotCollector::counters() const {
  std::lock_guard lock(impl_->mutex);
  HotCollectorCounters counters = impl_->counters;
  CopyLoopCounters(impl_->loop.counters(), counters);
  return counters;
}

}  // namespace libra::hotpath
