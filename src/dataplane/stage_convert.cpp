#include "stages.h"

namespace libra::dataplane {

void ConvertStage(PacketContext& ctx, PipelineState& state) {
  const FixedPointCodec& codec = *state.codec;
  std::uint64_t rejected = 0;
  std::uint64_t saturated = 0;
  for (std::size_t j = 0; j < ctx.header().slot_count; ++j) {
    const wire::Slot& slot = ctx.message.slots[j];
    if (!slot.valid) continue;
    const FixedValue fixed = codec.ToFixed(slot.value);
    ctx.fixed[j] = fixed;
    rejected += fixed.status == ConversionStatus::kRejected;
    saturated += fixed.status == ConversionStatus::kSaturated;
  }
  if (rejected != 0) state.counters.Count(Event::kValuesRejected, rejected);
  if (saturated != 0) state.counters.Count(Event::kValuesSaturated, saturated);
}

}  // namespace libra::dataplane
