#include "stages.h"

namespace libra::dataplane {
namespace {

struct AggregateCounts {
  std::uint64_t aggregated = 0;
  std::uint64_t stale = 0;
  std::uint64_t saturated = 0;  // updates of cells that carry the flag
};

// The loop over the valid slots, compiled twice: kAllOk (no value saturated
// or was rejected, nearly every packet) drops the per-slot status tests.
template <bool kAllOk>
AggregateCounts AggregateSlots(const PacketContext& ctx, PipelineState& state) {
  const std::size_t bank_base = std::size_t{ctx.bank} * state.cells_per_array;
  AggregateCounts counts;
  ForEachSlot(ctx.valid_slots, [&](std::size_t j) {
    // A rejected value (infinity, NaN) adds nothing but flags the cell, so
    // the server aggregates that key itself instead of trusting the sum.
    const ConversionStatus status = kAllOk ? ConversionStatus::kOk : ctx.status[j];
    const AccumulateValue::Output output = state.values[j].Execute(
        ctx.pass, bank_base + ctx.index[j],
        AccumulateValue{ctx.epoch_tag, ctx.fixed[j], status != ConversionStatus::kOk});
    const bool updated = output.action != CellAction::kKeep;
    counts.stale += !updated;
    counts.aggregated += updated & (status != ConversionStatus::kRejected);
    counts.saturated += updated & output.saturated;
  });
  return counts;
}

}  // namespace

void AggregateStage(PacketContext& ctx, PipelineState& state) {
  const AggregateCounts counts =
      ctx.all_values_ok ? AggregateSlots<true>(ctx, state) : AggregateSlots<false>(ctx, state);
  state.counters.Count(Event::kValuesAggregated, counts.aggregated);
  if (counts.stale != 0) state.counters.Count(Event::kValuesStale, counts.stale);
  if (counts.saturated != 0) state.counters.Count(Event::kSaturatedCellUpdates, counts.saturated);
}

}  // namespace libra::dataplane
