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

// Byte-swaps `count` slots into key and value words.
LIBRA_SLOT_KERNEL void LoadSlots(const std::uint8_t* __restrict in, std::size_t count,
                                 std::uint32_t* __restrict key, std::uint32_t* __restrict value) {
  ForSlots(count, [&](std::size_t j) {
    const std::uint64_t word = wire::LoadSlotWord(in + j * wire::kSlotBytes);
    key[j] = wire::SlotKeyWord(word);
    value[j] = wire::SlotValueWord(word);
  });
}

// Turns key words into cell indices in place; returns the mask of the slots
// whose valid bit is set.
LIBRA_SLOT_KERNEL std::uint64_t SplitKeys(std::size_t count, std::uint32_t* __restrict key) {
  return SlotMask(count, [&](std::size_t j) {
    const std::uint32_t valid = wire::SlotValidBitOf(key[j]);
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
