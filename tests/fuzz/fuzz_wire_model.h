// The hot-path wire format (src/wire/wire.h, version 5) restated from
// its rules, not from wire.cpp, for the fuzz targets that decode datagrams
// (fuzz_hot_replica, fuzz_switch_program). Each check returns nullptr when
// the codec agrees with the rules, else what disagrees:
//   - DecodeFailure: wire::Decode accepts a datagram exactly when the rules
//     call it well formed (length, masks and row blocks agree with the
//     header), and an error it gives has its reason in the datagram (a
//     kTruncated datagram really is short of what its header announces...);
//     an accepted UPDATE/REPLICA holds the cells the rules read, in order;
//   - RoundTripFailure: a decoded datagram encodes back to the same bytes
//     with the encoder of its payload kind (wire::Encode for slots and
//     RESULT, whose values must be valid, of strictly increasing COLLECT
//     slots, saturated only under SATURATED; wire::EncodeUpdate for row
//     blocks, whose tag it leaves zero: the bytes before the tag must
//     match, the tag is the hosts' to check). EncodeUpdate writes one block
//     per row, rows increasing, so
//     the check is exact for row blocks whose rows strictly increase;
//     otherwise the cells sorted by (row, array) must encode (the blocks of
//     a row merged) and decode back, EncodeUpdate must refuse the cells in
//     packet order when they are not sorted, and any cell that repeats.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "wire/wire.h"

namespace libra::fuzz {

// The row blocks of an UPDATE/REPLICA payload (bytes after the header),
// walked to the end of the bytes.
struct RowBlockWalk {
  std::size_t blocks = 0;              // complete blocks (header and values)
  std::size_t values = 0;              // the values of the complete blocks
  bool ends_inside = false;            // the bytes end inside a block's header or values
  bool bad_block = false;              // a block header whose mask is 0 or whose row is too big
  std::vector<wire::CellValue> cells;  // of the complete blocks, in order
};

inline RowBlockWalk WalkRowBlocks(std::span<const std::uint8_t> payload) {
  RowBlockWalk walk;
  std::size_t at = 0;
  while (at < payload.size()) {
    if (payload.size() - at < wire::kRowBlockHeaderBytes) {
      walk.ends_inside = true;
      break;
    }
    const std::uint32_t row = wire::LoadBig32(&payload[at]);
    const std::uint64_t mask = wire::LoadBig64(&payload[at + wire::kRowBlockMaskAt]);
    at += wire::kRowBlockHeaderBytes;
    if (mask == 0 || row > wire::kSlotIndexMask) walk.bad_block = true;
    const auto count = static_cast<std::size_t>(std::popcount(mask));
    if (payload.size() - at < wire::kValueBytes * count) {
      walk.ends_inside = true;
      break;
    }
    for (std::uint32_t array = 0; array < wire::kMaxSlots; ++array) {
      if (((mask >> array) & 1) == 0) continue;
      walk.cells.push_back({array, row, wire::LoadBig32(&payload[at])});
      at += wire::kValueBytes;
    }
    ++walk.blocks;
    walk.values += count;
  }
  return walk;
}

// What the rules say about a datagram of a header's length or more, with
// the right version and a known type.
struct WireRules {
  bool short_of_header = false;  // fewer bytes than the header announces
  bool past_header = false;      // more bytes than it announces
  bool bad_payload = false;      // masks or row blocks that contradict the header
  bool too_many = false;         // slot_count over the format's limit
  bool well_formed = false;
  RowBlockWalk walk;  // UPDATE/REPLICA
};

inline WireRules RulesOf(std::span<const std::uint8_t> d) {
  WireRules rules;
  const auto type = static_cast<wire::MessageType>(d[wire::kTypeAt]);
  const std::uint16_t flags = wire::LoadBig16(&d[wire::kFlagsAt]);
  const std::size_t n = wire::LoadBig16(&d[wire::kSlotCountAt]);
  const std::span<const std::uint8_t> payload = d.subspan(wire::kHeaderBytes);
  if (type == wire::MessageType::kUpdate || type == wire::MessageType::kReplica) {
    // Row blocks: | row 32 | mask 64 | popcount(mask) values |..., holding
    // slot_count values in all, then a 16-byte tag, in at most
    // kMaxMessageBytes.
    const bool has_tag = payload.size() >= wire::kUpdateTagBytes;
    if (has_tag) rules.walk = WalkRowBlocks(payload.first(payload.size() - wire::kUpdateTagBytes));
    rules.too_many = n > wire::kMaxUpdateValues;
    rules.short_of_header = !has_tag || rules.walk.ends_inside || rules.walk.values < n;
    rules.past_header = d.size() > wire::kMaxMessageBytes || rules.walk.values > n;
    rules.bad_payload = rules.walk.bad_block;
  } else if (type == wire::MessageType::kResult) {
    // | written mask | saturated mask if SATURATED | n values |, no mask when
    // n is 0; the written mask has n bits, the saturated one only those.
    const bool saturated = (flags & wire::kFlagSaturated) != 0;
    const std::size_t expected =
        wire::kHeaderBytes +
        (n == 0 ? 0 : wire::kMaskBytes * (saturated ? 2 : 1) + wire::kValueBytes * n);
    rules.too_many = n > wire::kMaxSlots;
    rules.short_of_header = d.size() < expected;
    rules.past_header = d.size() > expected;
    if (n > 0 && d.size() == expected) {
      const std::uint64_t written = wire::LoadBig64(&payload[0]);
      const std::uint64_t saturated_mask =
          saturated ? wire::LoadBig64(&payload[wire::kMaskBytes]) : 0;
      rules.bad_payload =
          static_cast<std::size_t>(std::popcount(written)) != n || (saturated_mask & ~written) != 0;
    }
  } else {
    // n slots of 8 bytes.
    rules.too_many = n > wire::kMaxSlots;
    rules.short_of_header = d.size() < wire::kHeaderBytes + wire::kSlotBytes * n;
    rules.past_header = d.size() > wire::kHeaderBytes + wire::kSlotBytes * n;
  }
  rules.well_formed =
      !rules.too_many && !rules.short_of_header && !rules.past_header && !rules.bad_payload;
  return rules;
}

inline bool SameCells(std::span<const wire::CellValue> a, std::span<const wire::CellValue> b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const wire::CellValue& x, const wire::CellValue& y) {
                      return x.array == y.array && x.index == y.index && x.value == y.value;
                    });
}

inline const char* DecodeFailure(std::span<const std::uint8_t> d, wire::DecodeError error,
                                 const wire::Message& message) {
  using wire::DecodeError;
  if (d.size() < wire::kHeaderBytes) {
    return error == DecodeError::kTruncated ? nullptr : "short of a header";
  }
  if (d[wire::kVersionAt] != wire::kVersion) {
    return error == DecodeError::kBadVersion ? nullptr : "version";
  }
  if (d[wire::kTypeAt] == 0 || d[wire::kTypeAt] > wire::kLastMessageType) {
    return error == DecodeError::kUnknownType ? nullptr : "type";
  }
  const WireRules rules = RulesOf(d);
  switch (error) {
    case DecodeError::kNone:
      break;
    case DecodeError::kTruncated:
      return rules.short_of_header ? nullptr : "truncated, but not short";
    case DecodeError::kOversized:
      return rules.past_header ? nullptr : "oversized, but not long";
    case DecodeError::kTooManySlots:
      return rules.too_many ? nullptr : "too many slots, but not";
    case DecodeError::kBadPayload:
      return rules.bad_payload ? nullptr : "bad payload, but not";
    default:
      return "an unexpected error";
  }
  if (!rules.well_formed) return "decoded, but not well formed";
  const wire::Header& h = message.header;
  if (h.version != d[wire::kVersionAt] ||
      h.type != static_cast<wire::MessageType>(d[wire::kTypeAt]) ||
      h.flags != wire::LoadBig16(&d[wire::kFlagsAt]) ||
      h.job_id != wire::LoadBig32(&d[wire::kJobIdAt]) ||
      h.node_id != wire::LoadBig16(&d[wire::kNodeIdAt]) ||
      h.slot_count != wire::LoadBig16(&d[wire::kSlotCountAt]) ||
      h.epoch != wire::LoadBig32(&d[wire::kEpochAt]) ||
      h.seq != wire::LoadBig32(&d[wire::kSeqAt])) {
    return "decoded header";
  }
  if (wire::PayloadOf(h.type) == wire::Payload::kRowBlocks &&
      !SameCells({message.cells.data(), h.slot_count}, rules.walk.cells)) {
    return "decoded cells";
  }
  return nullptr;
}

inline const char* RoundTripFailure(std::span<const std::uint8_t> d, const wire::Message& m) {
  const wire::Header& h = m.header;
  std::array<std::uint8_t, wire::kMaxMessageBytes> again{};
  if (wire::PayloadOf(h.type) != wire::Payload::kRowBlocks) {
    if (wire::PayloadOf(h.type) == wire::Payload::kResult) {
      // Valid values of strictly increasing COLLECT slots, saturated only
      // under the SATURATED flag.
      for (std::size_t i = 0; i < h.slot_count; ++i) {
        const wire::Slot& slot = m.slots[i];
        if (!slot.valid || slot.index >= wire::kMaxSlots ||
            (i > 0 && slot.index <= m.slots[i - 1].index)) {
          return "RESULT slots";
        }
        if (slot.saturated && (h.flags & wire::kFlagSaturated) == 0) return "RESULT saturation";
      }
    }
    const std::size_t length = wire::Encode(h, m.slots, again);
    if (length != d.size() || !std::equal(d.begin(), d.end(), again.begin())) return "round trip";
    return nullptr;
  }

  const std::span<const wire::CellValue> cells(m.cells.data(), h.slot_count);
  const auto before = [](const wire::CellValue& a, const wire::CellValue& b) {
    return a.index != b.index ? a.index < b.index : a.array < b.array;
  };
  const auto rows = [](std::span<const wire::CellValue> sorted) {
    std::size_t count = 0;
    for (std::size_t i = 0; i < sorted.size(); ++i) {
      count += i == 0 || sorted[i].index != sorted[i - 1].index ? 1 : 0;
    }
    return count;
  };
  // Encodes sorted cells: one block per row, and they decode back.
  const auto encode_sorted = [&](std::span<const wire::CellValue> sorted) -> const char* {
    const std::size_t length = wire::EncodeUpdate(h, sorted, again);
    if (length != wire::kHeaderBytes + wire::kRowBlockHeaderBytes * rows(sorted) +
                      wire::kValueBytes * sorted.size() + wire::kUpdateTagBytes ||
        length != wire::UpdateSize(sorted)) {
      return "EncodeUpdate length";
    }
    wire::Message back;
    if (wire::Decode({again.data(), length}, &back) != wire::DecodeError::kNone ||
        back.header.slot_count != h.slot_count ||
        !SameCells({back.cells.data(), back.header.slot_count}, sorted)) {
      return "EncodeUpdate decodes back";
    }
    return nullptr;
  };

  bool ordered = true;
  for (std::size_t i = 1; i < cells.size(); ++i) {
    ordered = ordered && before(cells[i - 1], cells[i]);
  }
  if (ordered) {
    if (const char* failure = encode_sorted(cells)) return failure;
    // The datagram's blocks are rows of their own unless two in a row
    // share one, which EncodeUpdate merges.
    const std::size_t tag_at = wire::UpdateTagAt(d.size());
    const std::size_t blocks = (tag_at - wire::kHeaderBytes - wire::kValueBytes * cells.size()) /
                               wire::kRowBlockHeaderBytes;
    if (blocks == rows(cells) && !std::equal(d.begin(), d.begin() + tag_at, again.begin())) {
      return "round trip";
    }
    return nullptr;
  }
  if (wire::EncodeUpdate(h, cells, again) != 0) return "EncodeUpdate took unsorted cells";
  std::vector<wire::CellValue> sorted(cells.begin(), cells.end());
  std::stable_sort(sorted.begin(), sorted.end(), before);
  bool repeats = false;
  for (std::size_t i = 1; i < sorted.size(); ++i) {
    repeats = repeats || !before(sorted[i - 1], sorted[i]);
  }
  if (repeats) {
    return wire::EncodeUpdate(h, sorted, again) == 0 ? nullptr : "EncodeUpdate took a repeat";
  }
  return encode_sorted(sorted);
}

}  // namespace libra::fuzz
