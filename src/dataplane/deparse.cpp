#include "stages.h"

namespace libra::dataplane {

void EmitHeader(const wire::Header& header, const UdpEndpoint& destination, PipelineState& state,
                OutputBatch& out) {
  wire::Header bare = header;
  bare.slot_count = 0;
  OutputPacket& packet = out.Append();
  packet.destination = destination;
  packet.length = static_cast<std::uint16_t>(wire::Encode(bare, {}, packet.bytes));
  state.counters.Count(Event::kPacketsOut);
}

void EmitAck(const PacketContext& ctx, std::uint16_t flags, PipelineState& state,
             OutputBatch& out) {
  wire::Header ack = ctx.header;
  ack.type = wire::MessageType::kAck;
  ack.flags = flags;
  EmitHeader(ack, ctx.source, state, out);
  state.counters.Count(Event::kAcks);
}

}  // namespace libra::dataplane
