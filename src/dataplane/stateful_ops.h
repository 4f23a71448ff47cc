// The conditional programs the switch runs on its pair registers, one per
// kind of state. Each is what one Tofino stateful ALU does in one pass: a
// comparison of the stored epoch tag (hi) with the packet's, then one of a few
// updates with operands from the packet, and one output back to the packet.
// The decisions are written as tables keyed on the comparison, the way the P4
// program spells them out.
//
// Epoch tags: a cell's hi half holds epoch + 1 (0 means never written) in its
// low 31 bits; value cells use bit 31 as the sticky saturation flag.
#pragma once

#include <array>
#include <cstdint>

#include "dataplane/register_array.h"
#include "wire/fixed_point.h"

namespace libra::dataplane {

inline constexpr std::uint32_t kTagMask = 0x7fffffffu;
inline constexpr std::uint32_t kSaturatedTagBit = 0x80000000u;
// Epochs run from 0 to kMaxEpoch; the tag of kMaxEpoch is kTagMask.
inline constexpr std::uint32_t kMaxEpoch = kTagMask - 1;

inline constexpr std::uint32_t EpochTag(std::uint32_t epoch) { return epoch + 1; }

// How the packet's epoch relates to the one stored in the cell.
enum class EpochOrder : std::uint8_t { kPacketOlder = 0, kSame = 1, kPacketNewer = 2 };

inline EpochOrder CompareEpochTags(std::uint32_t packet_tag, std::uint32_t stored_hi) {
  const std::uint32_t stored = stored_hi & kTagMask;
  if (packet_tag == stored) return EpochOrder::kSame;
  return packet_tag > stored ? EpochOrder::kPacketNewer : EpochOrder::kPacketOlder;
}

enum class CellAction : std::uint8_t { kKeep, kAdd, kReplace };

// The epoch-tagged cell: same epoch adds, a newer epoch replaces (the bank is
// reused two epochs later), an older epoch leaves it alone.
inline constexpr std::array<CellAction, 3> kEpochCellTable = {
    /* kPacketOlder */ CellAction::kKeep,
    /* kSame        */ CellAction::kAdd,
    /* kPacketNewer */ CellAction::kReplace,
};

// Gradient cell: lo = fixed-point sum (saturating), hi bit 31 = saturated.
struct AccumulateValue {
  std::uint32_t tag;
  std::int32_t addend;
  bool mark_saturated;  // the value itself saturated or was rejected

  // Returns what it did to the cell. (The cell's saturation flag after the
  // update, IsSaturated, is the ALU's second output; returning both as one
  // struct costs the compiler's register allocation more than the update.)
  CellAction operator()(RegisterPair& cell) const {
    const CellAction action = kEpochCellTable[static_cast<int>(CompareEpochTags(tag, cell.hi))];
    // kAdd first: all but the first packet of an epoch to reach a cell add.
    if (action == CellAction::kAdd) [[likely]] {
      // The saturating add, spelled out so that the common case is one add
      // and one overflow test.
      std::int32_t sum = 0;
      if (__builtin_add_overflow(static_cast<std::int32_t>(cell.lo), addend, &sum)) [[unlikely]] {
        sum = addend > 0 ? INT32_MAX : INT32_MIN;
        cell.hi |= kSaturatedTagBit;
      }
      cell.lo = static_cast<std::uint32_t>(sum);
      if (mark_saturated) [[unlikely]]
        cell.hi |= kSaturatedTagBit;
    } else if (action == CellAction::kReplace) {
      cell.lo = static_cast<std::uint32_t>(addend);
      cell.hi = tag | (mark_saturated ? kSaturatedTagBit : 0u);
    }
    return action;
  }
};

// AccumulateValue for a value that converted cleanly (mark_saturated false),
// with every decision made by selects instead of branches, so that a loop
// over neighbouring cells vectorises (stage_aggregate.cpp). Same table, same
// result: same epoch adds (saturating, flagging the cell on overflow), a
// newer one replaces, an older one keeps. Returns false when it kept the
// cell. Tests check it against AccumulateValue.
inline bool AccumulateCleanValue(std::uint32_t tag, std::int32_t addend, RegisterPair& cell) {
  const std::uint32_t stored = cell.hi & kTagMask;
  const bool add = stored == tag;     // EpochOrder::kSame -> CellAction::kAdd
  const bool replace = tag > stored;  // EpochOrder::kPacketNewer -> CellAction::kReplace
  const auto value = static_cast<std::uint32_t>(addend);
  const std::uint32_t sum = cell.lo + value;
  // Signed overflow: both operands have one sign, the wrapped sum the other.
  const bool overflow = (((cell.lo ^ sum) & (value ^ sum)) >> 31) != 0;
  const std::uint32_t limit = 0x7fffffffu + (value >> 31);  // INT32_MAX, or INT32_MIN if negative
  const std::uint32_t added_lo = overflow ? limit : sum;
  const std::uint32_t added_hi = cell.hi | (overflow ? kSaturatedTagBit : 0u);
  cell.lo = add ? added_lo : (replace ? value : cell.lo);
  cell.hi = add ? added_hi : (replace ? tag : cell.hi);
  return add || replace;
}

// Whether a value cell carries the saturation flag.
inline bool IsSaturated(const RegisterPair& cell) { return (cell.hi & kSaturatedTagBit) != 0; }

// Per-epoch counter (DATA packets of a worker, FINs of an epoch):
// lo = count. Returns the count after the update, 0 when kept.
struct CountInEpoch {
  std::uint32_t tag;

  struct Output {
    CellAction action;
    std::uint32_t count;
  };

  Output operator()(RegisterPair& cell) const {
    const CellAction action = kEpochCellTable[static_cast<int>(CompareEpochTags(tag, cell.hi))];
    switch (action) {
      case CellAction::kKeep:
        return {action, 0};
      case CellAction::kAdd:
        return {action, ++cell.lo};
      case CellAction::kReplace:
        cell.hi = tag;
        cell.lo = 1;
        return {action, 1};
    }
    return {action, 0};
  }
};

// Reads a tagged cell as of the packet's epoch: a cell written in an older
// epoch reads as zero (this is what makes COLLECT idempotent).
struct ReadInEpoch {
  std::uint32_t tag;

  struct Output {
    std::uint32_t lo;
    bool saturated;
    bool newer_epoch_stored;  // the bank has moved on past the packet's epoch
    bool written;             // the cell holds the packet's epoch (some add reached it)
  };

  Output operator()(RegisterPair& cell) const {
    switch (CompareEpochTags(tag, cell.hi)) {
      case EpochOrder::kSame:
        return {cell.lo, (cell.hi & kSaturatedTagBit) != 0, false, true};
      case EpochOrder::kPacketNewer:
        return {0, false, false, false};
      case EpochOrder::kPacketOlder:
        return {0, false, true, false};
    }
    return {0, false, false, false};
  }
};

enum class SeqVerdict : std::uint8_t { kNew, kDuplicate };

// One cell of a worker's dedup window: (epoch tag, seq). A worker sends seq s
// only once every seq <= s - W is ACKed, so a seq not above the one stored in
// its cell (or from an older epoch) was seen before.
struct RecordSeq {
  std::uint32_t tag;
  std::uint32_t seq;

  SeqVerdict operator()(RegisterPair& cell) const {
    const EpochOrder order = CompareEpochTags(tag, cell.hi);
    const bool is_new =
        order == EpochOrder::kPacketNewer || (order == EpochOrder::kSame && seq > cell.lo);
    if (!is_new) return SeqVerdict::kDuplicate;
    cell.hi = tag;
    cell.lo = seq;
    return SeqVerdict::kNew;
  }
};

// Marks that something happened once per epoch (a worker's FIN).
struct MarkEpochOnce {
  std::uint32_t tag;

  SeqVerdict operator()(RegisterPair& cell) const {
    if (CompareEpochTags(tag, cell.hi) != EpochOrder::kPacketNewer) return SeqVerdict::kDuplicate;
    cell.hi = tag;
    return SeqVerdict::kNew;
  }
};

}  // namespace libra::dataplane
