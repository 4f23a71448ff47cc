#include "dataplane/stages.h"

namespace libra::dataplane {
namespace {

// float32 -> fixed point of `count` slots, valid or not (an invalid slot's
// result is never used), so that neither loop has a branch: first the
// exponent table's match for every slot (a load each), then its action
// applied to every slot, a few shifts and masks that vectorise. Returns the
// OR of the statuses (kOk is zero), read from the OR of the entries.
LIBRA_SLOT_KERNEL ConversionStatus ConvertSlots(const std::uint32_t* __restrict exponent_table,
                                                const std::uint32_t* __restrict value,
                                                std::size_t count, std::int32_t* __restrict fixed) {
  alignas(32) std::uint32_t entry[wire::kMaxSlots];
  std::uint32_t entries_ored = 0;
  ForSlots(count, [&](std::size_t j) {
    entry[j] = exponent_table[(value[j] >> 23) & 0xffu];
    entries_ored |= entry[j];
  });
  ForSlots(count,
           [&](std::size_t j) { fixed[j] = ApplyToFixed(ToFixedEntry{entry[j]}, value[j]); });
  return ToFixedEntry{entries_ored}.status();
}

// Some slot did not convert cleanly (rare): records every valid slot's status
// for the aggregate stage and counts the unusual ones.
[[gnu::noinline]] bool RecordStatuses(PacketContext& ctx, PipelineState& state) {
  std::uint64_t rejected = 0;
  std::uint64_t saturated = 0;
  ForEachSlot(ctx.valid_slots, [&](std::size_t j) {
    ctx.status[j] = state.codec->ToFixed(ctx.value[j]).status;
    rejected += ctx.status[j] == ConversionStatus::kRejected;
    saturated += ctx.status[j] == ConversionStatus::kSaturated;
  });
  if (rejected != 0) state.counters.Count(Event::kValuesRejected, rejected);
  if (saturated != 0) state.counters.Count(Event::kValuesSaturated, saturated);
  return rejected + saturated == 0;
}

}  // namespace

void ConvertStage(PacketContext& ctx, PipelineState& state) {
  const ConversionStatus statuses =
      ConvertSlots(state.codec->exponent_table().data(), ctx.value.data(), ctx.header.slot_count,
                   ctx.fixed.data());
  // An invalid slot may hold any bits; only the valid ones decide.
  ctx.all_values_ok = statuses == ConversionStatus::kOk || RecordStatuses(ctx, state);
}

}  // namespace libra::dataplane
