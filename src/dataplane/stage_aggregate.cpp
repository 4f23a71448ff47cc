#include "dataplane/stages.h"

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

// The slots among the first `count` whose index differs from slot 0's.
LIBRA_SLOT_KERNEL std::uint64_t SlotsOffRow(const std::uint32_t* __restrict index,
                                            std::size_t count) {
  const std::uint32_t row = index[0];
  return SlotMask(count, [&](std::size_t j) { return index[j] != row; });
}

// Slots 0 .. count-1 add into cells 0 .. count-1 of one row: the P pair
// programs a Tofino runs in P stages, here one loop over neighbouring cells
// without a branch, which the compiler vectorises.
LIBRA_SLOT_KERNEL AggregateCounts AccumulateRow(RegisterPair* __restrict row,
                                                const std::int32_t* __restrict fixed,
                                                std::size_t count, std::uint32_t tag) {
  std::uint32_t kept = 0;
  std::uint32_t saturated = 0;
  ForSlots(count, [&](std::size_t j) {
    const std::uint32_t updated = AccumulateCleanValue(tag, fixed[j], row[j]);
    kept += 1 - updated;
    saturated += updated & (row[j].hi >> 31);  // an updated cell that carries the flag
  });
  return {count - kept, kept, saturated};
}

// Every slot valid, every value converted cleanly, and every slot addressing
// the same row: a packer's packet when its per-array queues hold the same
// rows (a dense push of whole rows). Sparse pushes rarely give one (counted
// as kDataOneRow); they take the slot loop.
bool IsOneCleanRow(const PacketContext& ctx) {
  const std::size_t count = ctx.header.slot_count;
  const std::uint64_t all = count >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << count) - 1;
  return count != 0 && ctx.all_values_ok && ctx.valid_slots == all &&
         SlotsOffRow(ctx.index.data(), count) == 0;
}

}  // namespace

void AggregateStage(PacketContext& ctx, PipelineState& state) {
  AggregateCounts counts;
  if (IsOneCleanRow(ctx)) {
    state.counters.Count(Event::kDataOneRow);
    state.values.AccessRow(
        ctx.pass, ctx.valid_slots, std::size_t{ctx.bank} * state.cells_per_array + ctx.index[0],
        [&](RegisterPair* row) {
          counts = AccumulateRow(row, ctx.fixed.data(), ctx.header.slot_count, ctx.epoch_tag);
        });
  } else {
    counts =
        ctx.all_values_ok ? AggregateSlots<true>(ctx, state) : AggregateSlots<false>(ctx, state);
  }
  state.counters.Count(Event::kValuesAggregated, counts.aggregated);
  if (counts.stale != 0) state.counters.Count(Event::kValuesStale, counts.stale);
  if (counts.saturated != 0) state.counters.Count(Event::kSaturatedCellUpdates, counts.saturated);
}

}  // namespace libra::dataplane
