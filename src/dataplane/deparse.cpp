#include <algorithm>

#include "dataplane/stages.h"

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
  // The ACK is the received header with its type, flags and slot count
  // rewritten, as a deparser emits a modified header: copy the 20 bytes and
  // patch three fields, rather than encode every field again.
  OutputPacket& packet = out.Append();
  packet.destination = ctx.source;
  packet.length = static_cast<std::uint16_t>(wire::kHeaderBytes);
  std::copy_n(ctx.bytes.data(), wire::kHeaderBytes, packet.bytes.data());
  wire::SetType(packet.bytes.data(), wire::MessageType::kAck);
  wire::SetFlags(packet.bytes.data(), flags);
  wire::SetSlotCount(packet.bytes.data(), 0);
  state.counters.Count(Event::kPacketsOut);
  state.counters.Count(Event::kAcks);
}

}  // namespace libra::dataplane
