#include <bit>
#include <cstring>

#include "dataplane/stages.h"

namespace libra::dataplane {
namespace {

DropReason ReasonFor(wire::DecodeError error) {
  switch (error) {
    case wire::DecodeError::kTruncated:
      return DropReason::kTruncated;
    case wire::DecodeError::kOversized:
      return DropReason::kOversized;
    case wire::DecodeError::kBadVersion:
      return DropReason::kBadVersion;
    case wire::DecodeError::kUnknownType:
      return DropReason::kUnknownType;
    case wire::DecodeError::kBadPayload:
      return DropReason::kBadPayload;
    case wire::DecodeError::kTooManySlots:
    case wire::DecodeError::kNone:
      break;
  }
  return DropReason::kTooManySlots;
}

// One 8-byte slot as a host-order 64-bit word: key word high, value low.
inline std::uint64_t LoadSlotWord(const std::uint8_t* p) {
  std::uint64_t big_endian;
  std::memcpy(&big_endian, p, sizeof(big_endian));
  if constexpr (std::endian::native == std::endian::little) {
    return __builtin_bswap64(big_endian);
  } else {
    return big_endian;
  }
}

// Byte-swaps `count` slots into key and value words.
LIBRA_SLOT_KERNEL void LoadSlots(const std::uint8_t* __restrict in, std::size_t count,
                                 std::uint32_t* __restrict key, std::uint32_t* __restrict value) {
  ForSlots(count, [&](std::size_t j) {
    const std::uint64_t word = LoadSlotWord(in + j * wire::kSlotBytes);
    key[j] = static_cast<std::uint32_t>(word >> 32);
    value[j] = static_cast<std::uint32_t>(word);
  });
}

// Turns key words into cell indices in place; returns the mask of the slots
// whose valid bit is set.
LIBRA_SLOT_KERNEL std::uint64_t SplitKeys(std::size_t count, std::uint32_t* __restrict key) {
  return SlotMask(count, [&](std::size_t j) {
    const std::uint32_t valid = key[j] >> 31;
    key[j] &= wire::kSlotIndexMask;
    return valid;
  });
}

}  // namespace

bool ParseStage(std::span<const std::uint8_t> bytes, PacketContext& ctx, PipelineState& state) {
  // The header decoder checks that the length is exactly what the header
  // announces.
  const wire::DecodeError error = wire::DecodeHeader(bytes, &ctx.header);
  if (error != wire::DecodeError::kNone) [[unlikely]] {
    state.counters.Count(ReasonFor(error));
    return false;
  }
  ctx.bytes = bytes;
  if (wire::PayloadOf(ctx.header.type) != wire::Payload::kSlots) {
    // RESULT is never received; UPDATE's row blocks are replicated as they
    // are, never read (a P4 parser would stop after the header).
    ctx.valid_slots = 0;
    return true;
  }
  LoadSlots(bytes.data() + wire::kHeaderBytes, ctx.header.slot_count, ctx.index.data(),
            ctx.value.data());
  ctx.valid_slots = SplitKeys(ctx.header.slot_count, ctx.index.data());
  return true;
}

}  // namespace libra::dataplane
