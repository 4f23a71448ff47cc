// Packing a worker's hot values into DATA packets.
//
// A switch pipeline may touch each register array once per pass. A packet
// that carries two values for one array is a *conflict*: the second value
// needs another pass (recirculation). Layout-aware packing makes that
// impossible: a packet has one slot per register array and slot j only ever
// carries a value for array j. The naive baseline packs values in key order,
// `slots` to a packet, and counts the conflicts it makes.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

#include "hot/hot_set.h"

namespace libra::hot {

struct PackingStats {
  uint64_t packets = 0;
  uint64_t values = 0;
  uint64_t slots = 0;         // packets x slots per packet
  uint64_t conflicts = 0;     // values meeting an array already used by their packet
  uint64_t extra_passes = 0;  // passes beyond the first that conflicting packets need

  double utilisation() const { return slots == 0 ? 0.0 : double(values) / double(slots); }
  PackingStats& operator+=(const PackingStats& other);
};

// One slot of a layout-aware packet: the cell index in the slot's array.
struct SlotValue {
  uint32_t index;
  float value;
};
inline constexpr uint32_t kEmptySlot = ~uint32_t{0};

// Per-array queues drained one value per array per packet. Buffers are kept
// across Clear(), so a sender that reuses one packer allocates nothing once
// warmed up.
class LayoutAwarePacker {
 public:
  explicit LayoutAwarePacker(uint32_t num_arrays);

  uint32_t num_arrays() const { return static_cast<uint32_t>(queues_.size()); }

  // Drops everything queued (not the statistics) and keeps the buffers.
  void Clear();
  void Push(CellAddress cell, float value) {
    if (cell.array >= queues_.size())
      throw std::out_of_range("packer: register array out of range");
    queues_[cell.array].push_back(SlotValue{cell.index, value});
  }
  // The values of one hot key: cells from HotSet::CellsOf, values in the same order.
  void PushKey(std::span<const CellAddress> cells, std::span<const float> values);

  // Packets still to come: the longest per-array queue.
  uint64_t packets_left() const;
  // Fills `slots` (num_arrays() entries, slot j for array j; unused slots get
  // index kEmptySlot) with the next packet. Returns false once all queued
  // values have been handed out.
  bool NextPacket(std::span<SlotValue> slots);

  // Totals over every packet handed out so far; conflicts are always 0.
  const PackingStats& stats() const { return stats_; }

 private:
  std::vector<std::vector<SlotValue>> queues_;
  std::vector<size_t> sent_;  // per array: values already handed out
  PackingStats stats_;
};

// Statistics of layout-aware packing of `cells` without building packets.
PackingStats CountLayoutAwarePackets(std::span<const CellAddress> cells, uint32_t num_arrays);

// Statistics of the naive baseline: `cells` in the order given, `num_arrays`
// to a packet, conflicts counted.
PackingStats CountSequentialPackets(std::span<const CellAddress> cells, uint32_t num_arrays);

}  // namespace libra::hot
