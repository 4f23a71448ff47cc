#include "stages.h"

namespace libra::dataplane {

void AggregateStage(PacketContext& ctx, PipelineState& state) {
  const std::size_t bank_base = std::size_t{ctx.bank} * state.cells_per_array;
  std::uint64_t aggregated = 0;
  std::uint64_t stale = 0;
  std::uint64_t saturated = 0;
  for (std::size_t j = 0; j < ctx.header().slot_count; ++j) {
    const wire::Slot& slot = ctx.message.slots[j];
    if (!slot.valid) continue;
    // A rejected value (infinity, NaN) adds nothing but flags the cell, so
    // the server aggregates that key itself instead of trusting the sum.
    const FixedValue fixed = ctx.fixed[j];
    const AccumulateValue::Output output = state.values[j].Execute(
        ctx.pass, bank_base + slot.index,
        AccumulateValue{ctx.epoch_tag, fixed.value, fixed.status != ConversionStatus::kOk});
    if (output.action == CellAction::kKeep) {
      ++stale;
      continue;
    }
    aggregated += fixed.status != ConversionStatus::kRejected;
    saturated += output.saturated;
  }
  state.counters.Count(Event::kValuesAggregated, aggregated);
  if (stale != 0) state.counters.Count(Event::kValuesStale, stale);
  if (saturated != 0) state.counters.Count(Event::kSaturatedCellUpdates, saturated);
}

}  // namespace libra::dataplane
