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

}  // namespace

bool ParseStage(std::span<const std::uint8_t> bytes, PacketContext& ctx, PipelineState& state) {
  const wire::DecodeError error = wire::Decode(bytes, &ctx.message);
  if (error == wire::DecodeError::kNone) return true;
  state.counters.Count(ReasonFor(error));
  return false;
}

}  // namespace libra::dataplane
