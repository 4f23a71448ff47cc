#include <bit>
#include <cstring>

#include "stages.h"

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

}  // namespace

bool ParseStage(std::span<const std::uint8_t> bytes, PacketContext& ctx, PipelineState& state) {
  // The header decoder checks that the length is exactly header + slots.
  const wire::DecodeError error = wire::DecodeHeader(bytes, &ctx.header);
  if (error != wire::DecodeError::kNone) [[unlikely]] {
    state.counters.Count(ReasonFor(error));
    return false;
  }
  ctx.bytes = bytes;
  const std::uint8_t* p = bytes.data() + wire::kHeaderBytes;
  std::uint64_t valid = 0;
  for (std::size_t j = 0; j < ctx.header.slot_count; ++j, p += wire::kSlotBytes) {
    const std::uint64_t word = LoadSlotWord(p);
    ctx.index[j] = static_cast<std::uint32_t>(word >> 32) & wire::kSlotIndexMask;
    ctx.value[j] = static_cast<std::uint32_t>(word);
    valid |= (word >> 63) << j;
  }
  ctx.valid_slots = valid;
  return true;
}

}  // namespace libra::dataplane
