#include "stages.h"

namespace libra::dataplane {
namespace {

// Counts the values that did not convert cleanly; rare, so kept off the loop.
[[gnu::noinline]] void CountUnusualValues(const PacketContext& ctx, PipelineState& state) {
  std::uint64_t rejected = 0;
  std::uint64_t saturated = 0;
  ForEachSlot(ctx.valid_slots, [&](std::size_t j) {
    rejected += ctx.status[j] == ConversionStatus::kRejected;
    saturated += ctx.status[j] == ConversionStatus::kSaturated;
  });
  if (rejected != 0) state.counters.Count(Event::kValuesRejected, rejected);
  if (saturated != 0) state.counters.Count(Event::kValuesSaturated, saturated);
}

}  // namespace

void ConvertStage(PacketContext& ctx, PipelineState& state) {
  const FixedPointCodec& codec = *state.codec;
  // Every slot goes through the table, valid or not (an invalid slot's result
  // is never used), so the loop has no branch.
  unsigned unusual = 0;
  for (std::size_t j = 0; j < ctx.header.slot_count; ++j) {
    const FixedValue fixed = codec.ToFixed(ctx.value[j]);
    ctx.fixed[j] = fixed.value;
    ctx.status[j] = fixed.status;
    unusual |= static_cast<unsigned>(fixed.status);
  }
  ctx.all_values_ok = unusual == 0;
  if (unusual != 0) [[unlikely]]
    CountUnusualValues(ctx, state);
}

}  // namespace libra::dataplane
