// Turning hot values into wire packets, the one place where the hot set,
// the layout-aware packer and the wire format meet. DATA (worker gradients)
// and COLLECT (server reads, values zero) respect the rule that slot j
// addresses array j; UPDATE (server parameters) carries row blocks.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "hot/hot_set.h"
#include "hot/packing.h"
#include "wire/wire.h"

namespace libra::hotpath {

// One encoded message, kept as bytes so that a retransmission is a resend of
// the same buffer with the RETRANSMISSION flag set in place.
struct EncodedPacket {
  std::array<std::uint8_t, wire::kMaxMessageBytes> bytes;
  std::uint16_t length = 0;

  std::span<const std::uint8_t> view() const { return {bytes.data(), length}; }
  void SetEpoch(std::uint32_t epoch) { wire::SetEpoch(bytes.data(), epoch); }
  void SetSeq(std::uint32_t seq) { wire::SetSeq(bytes.data(), seq); }
  void SetFlags(std::uint16_t flags) { wire::SetFlags(bytes.data(), flags); }
  std::uint16_t slot_count() const { return wire::SlotCountOf(bytes.data()); }
  std::uint32_t seq() const { return wire::SeqOf(bytes.data()); }
};

// In a request for some packets of an UPDATE stream (a worker's packet
// repair): no "and every packet from this number on".
inline constexpr std::uint32_t kNoStreamTail = ~std::uint32_t{0};

// Where each slot of each packet came from: value position in the caller's
// `vals`, or kNoValue for a hole.
inline constexpr std::uint32_t kNoValue = ~std::uint32_t{0};

struct PackedValues {
  std::vector<EncodedPacket> packets;
  // packets.size() x num_arrays entries.
  std::vector<std::uint32_t> value_of_slot;
};

// Checks a push against the hot set and returns, per key, the index of its
// first value in `vals`. Throws std::invalid_argument (naming the key) on a
// cold key, a length that differs from the key's value_len, or a vals size
// that does not match. Empty `lens` means every key has its value_len.
// `entries`, if given, gets each key's hot-set entry (so that a caller
// looks each key up once).
std::vector<std::uint32_t> CheckHotValues(const hot::HotSet& hot_set,
                                          std::span<const hot::Key> keys,
                                          std::span<const float> vals, std::span<const int> lens,
                                          std::vector<hot::HotSet::Entry>* entries = nullptr);

// The same for a caller that has looked the keys up already: `entries[i]`
// is the hot set's Lookup of keys[i] (a kCold entry names the key in the
// error). No key is looked up.
std::vector<std::uint32_t> CheckHotValues(std::span<const hot::Key> keys,
                                          std::span<const hot::HotSet::Entry> entries,
                                          std::span<const float> vals, std::span<const int> lens);

// Packs the values of hot `keys` (vals key after key, offsets from
// CheckHotValues) layout-aware into packets with `header`'s fields and seq
// = packet number from 0: QueueHotCells, then PackQueuedCells. Trailing
// empty slots are cut; `vals` empty packs zeros (COLLECT).
PackedValues PackHotValues(const hot::HotSet& hot_set, const wire::Header& header,
                           std::span<const hot::Key> keys,
                           std::span<const std::uint32_t> first_value, std::span<const float> vals);

// The cells of values, per register array in the order they go out: entry
// k of queued[j] is QueuedCell(cell index, value position) of the k-th
// value of array j. Packet k takes entry k of every array.
using CellQueues = std::vector<std::vector<std::uint64_t>>;
inline std::uint64_t QueuedCell(std::uint32_t index, std::uint32_t position) {
  return std::uint64_t{index} << 32 | position;
}

// The cells of hot `keys` (offsets from CheckHotValues) queued per array in
// order of cell index (row), as PackHotValues sends them.
CellQueues QueueHotCells(const hot::HotSet& hot_set, std::span<const hot::Key> keys,
                         std::span<const std::uint32_t> first_value);

// QueueHotCells without the sort, for a caller that queues push after push
// over one hot set (a worker's sender): the cells are marked in a bitmap
// over the switch's cells and read back row by row, O(cells + capacity / 64)
// a push instead of a sort of every array's queue. Keeps its buffers
// between calls; not thread-safe.
class RowOrderQueuer {
 public:
  explicit RowOrderQueuer(std::shared_ptr<const hot::HotSet> hot_set);

  // The same queues as QueueHotCells(hot_set, keys, first_value), valid
  // until the next call; `entries`: each key's hot-set entry (as
  // CheckHotValues gives them). A key listed twice falls back to
  // QueueHotCells.
  const CellQueues& Queue(std::span<const hot::Key> keys,
                          std::span<const hot::HotSet::Entry> entries,
                          std::span<const std::uint32_t> first_value);

 private:
  std::shared_ptr<const hot::HotSet> hot_set_;
  std::vector<std::uint64_t> marked_;    // bit per cell, array after array
  std::vector<std::uint32_t> position_;  // value position of each marked cell
  CellQueues queues_;
};

// Packs `queued` (one queue per array of the job) into packets with
// `header`'s fields and seq = packet number from 0, slot j of a packet for
// array j, values from `vals` by position (zeros when empty: COLLECT).
// Trailing empty slots are cut.
PackedValues PackQueuedCells(const wire::Header& header, const CellQueues& queued,
                             std::span<const float> vals);

// The values of hot `keys` (offsets from CheckHotValues) as UPDATE packets
// with `header`'s fields and seq = packet number from 0: their cells sorted
// by row, each packet as full as kMaxMessageBytes allows. Empty keys: no
// packets. `entries`, when not empty, is each key's hot-set entry (as
// CheckHotValues gives them; no key is then looked up again).
std::vector<EncodedPacket> PackUpdate(const hot::HotSet& hot_set, const wire::Header& header,
                                      std::span<const hot::Key> keys,
                                      std::span<const std::uint32_t> first_value,
                                      std::span<const float> vals,
                                      std::span<const hot::HotSet::Entry> entries = {});

}  // namespace libra::hotpath
