#include "stages.h"

namespace libra::dataplane {

void AggregateStage(PacketContext& ctx, PipelineState& state) {
  const std::size_t bank_base = std::size_t{ctx.bank} * state.cells_per_array;
  std::uint64_t aggregated = 0;
  std::uint64_t stale = 0;
  std::uint64_t saturated = 0;
  ForEachSlot(ctx.valid_slots, [&](std::size_t j) {
    // A rejected value (infinity, NaN) adds nothing but flags the cell, so
    // the server aggregates that key itself instead of trusting the sum.
    const ConversionStatus status = ctx.status[j];
    const AccumulateValue::Output output = state.values[j].Execute(
        ctx.pass, bank_base + ctx.index[j],
        AccumulateValue{ctx.epoch_tag, ctx.fixed[j], status != ConversionStatus::kOk});
    const bool updated = output.action != CellAction::kKeep;
    stale += !updated;
    aggregated += updated & (status != ConversionStatus::kRejected);
    saturated += updated & output.saturated;
  });
  state.counters.Count(Event::kValuesAggregated, aggregated);
  if (stale != 0) state.counters.Count(Event::kValuesStale, stale);
  if (saturated != 0) state.counters.Count(Event::kSaturatedCellUpdates, saturated);
}

}  // namespace libra::dataplane
