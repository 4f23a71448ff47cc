#include "dataplane/stages.h"

namespace libra::dataplane {

void CollectStage(PacketContext& ctx, PipelineState& state, OutputBatch& out) {
  const wire::Header& request = ctx.header;
  state.counters.Count(Event::kCollectPackets);

  const ReadInEpoch::Output finished =
      state.fin_count.Execute(ctx.pass, ctx.bank, ReadInEpoch{ctx.epoch_tag});
  if (finished.newer_epoch_stored) {
    state.counters.Count(DropReason::kStaleEpoch);
    return;
  }

  wire::Header result = request;
  result.type = wire::MessageType::kResult;
  result.flags = 0;
  const UdpEndpoint& server = state.job->servers[ctx.peer.id];
  if (finished.lo != state.workers) {
    // The server asked early (or lost READY): tell it to wait, read nothing.
    state.counters.Count(Event::kCollectNotReady);
    result.flags = wire::kFlagNotReady;
    result.slot_count = 0;
    EmitHeader(result, server, state, out);
    return;
  }

  // Every asked cell is read (one access per array, as always), but only
  // the cells some worker wrote in this epoch go into the RESULT: the
  // deparser leaves out the slots of the others, so the server receives the
  // sums that exist and never a run of zeros. A kept slot names the COLLECT
  // slot (= register array) it answers, since its position no longer does.
  std::array<wire::Slot, wire::kMaxSlots> slots;
  std::uint16_t kept = 0;
  const std::size_t bank_base = std::size_t{ctx.bank} * state.cells_per_array;
  // A ROW request names one row in slot 0: cell `row` of every array.
  const bool by_row = (request.flags & wire::kFlagRow) != 0;
  const std::size_t reads =
      by_row ? (request.slot_count > 0 ? static_cast<std::size_t>(state.job->slots_per_packet) : 0)
             : request.slot_count;
  for (std::size_t j = 0; j < reads; ++j) {
    const wire::Slot asked = by_row ? ctx.slot(0) : ctx.slot(j);
    if (!asked.valid) continue;
    const ReadInEpoch::Output cell =
        state.values.Execute(ctx.pass, j, bank_base + asked.index, ReadInEpoch{ctx.epoch_tag});
    if (!cell.written) continue;
    // The fixed-point sum as the register holds it: the server converts it
    // (and checks it exactly, which a float32 of it would not allow once it
    // passes 2^24).
    slots[kept++] = wire::Slot{true, cell.saturated, static_cast<std::uint32_t>(j), cell.lo};
    if (cell.saturated) result.flags |= wire::kFlagSaturated;
  }
  result.slot_count = kept;

  OutputPacket& packet = out.Append();
  packet.destination = server;
  packet.length = static_cast<std::uint16_t>(wire::Encode(result, slots, packet.bytes));
  state.counters.Count(Event::kPacketsOut);
  state.counters.Count(Event::kResultsSent);
  if ((result.flags & wire::kFlagSaturated) != 0) state.counters.Count(Event::kResultsSaturated);
}

}  // namespace libra::dataplane
