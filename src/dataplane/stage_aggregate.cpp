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
  // Locals, so that the stores into cells cannot force reloads per slot.
  const std::uint32_t tag = ctx.epoch_tag;
  const std::int32_t* const fixed = ctx.fixed.data();
  const ConversionStatus* const status = ctx.status.data();
  AggregateCounts counts;
  // Slot j adds into array j: one access to each array of a valid slot.
  state.values.AccessEach(
      ctx.pass, ctx.valid_slots, ctx.index.data(), std::size_t{ctx.bank} * state.cells_per_array,
      [&](std::size_t j, RegisterPair& cell) {
        // A rejected value (infinity, NaN) adds nothing but flags the cell,
        // so the server aggregates that key itself instead of trusting the sum.
        const ConversionStatus value_status = kAllOk ? ConversionStatus::kOk : status[j];
        const CellAction action =
            AccumulateValue{tag, fixed[j], value_status != ConversionStatus::kOk}(cell);
        if (action == CellAction::kKeep) [[unlikely]] {
          ++counts.stale;
          return;
        }
        counts.aggregated += kAllOk || value_status != ConversionStatus::kRejected;
        counts.saturated += IsSaturated(cell);
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
