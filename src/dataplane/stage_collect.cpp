#include "stages.h"

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

  std::array<wire::Slot, wire::kMaxSlots> slots;
  const std::size_t bank_base = std::size_t{ctx.bank} * state.cells_per_array;
  for (std::size_t j = 0; j < request.slot_count; ++j) {
    const wire::Slot asked = ctx.slot(j);
    slots[j] = wire::Slot{asked.valid, false, asked.index, 0};
    if (!asked.valid) continue;
    const ReadInEpoch::Output cell =
        state.values.Execute(ctx.pass, j, bank_base + asked.index, ReadInEpoch{ctx.epoch_tag});
    slots[j].value = state.codec->ToFloatBits(static_cast<std::int32_t>(cell.lo));
    slots[j].saturated = cell.saturated;
    if (cell.saturated) result.flags |= wire::kFlagSaturated;
  }

  OutputPacket& packet = out.Append();
  packet.destination = server;
  packet.length = static_cast<std::uint16_t>(wire::Encode(result, slots, packet.bytes));
  state.counters.Count(Event::kPacketsOut);
  state.counters.Count(Event::kResultsSent);
  if ((result.flags & wire::kFlagSaturated) != 0) state.counters.Count(Event::kResultsSaturated);
}

}  // namespace libra::dataplane
