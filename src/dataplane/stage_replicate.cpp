#include <algorithm>

#include "dataplane/stages.h"

namespace libra::dataplane {

void ReplicateStage(PacketContext& ctx, PipelineState& state, OutputBatch& out) {
  state.counters.Count(Event::kUpdatePackets);
  // The packet replication engine makes one copy per worker; the payload is
  // carried as is (parameters are float32 and need no arithmetic), only the
  // message type is rewritten.
  for (const UdpEndpoint& worker : state.job->workers) {
    OutputPacket& packet = out.Append();
    packet.destination = worker;
    packet.length = static_cast<std::uint16_t>(ctx.bytes.size());
    std::copy(ctx.bytes.begin(), ctx.bytes.end(), packet.bytes.begin());
    wire::SetType(packet.bytes.data(), wire::MessageType::kReplica);
  }
  state.counters.Count(Event::kReplicasSent, state.job->workers.size());
  state.counters.Count(Event::kPacketsOut, state.job->workers.size());
  // The server learns the UPDATE got through (and paces the next ones by
  // these ACKs, so a burst of thousands cannot overflow a queue on the way).
  // The ACK echoes RETRANSMISSION: UPDATEs are not deduplicated, every copy
  // is ACKed, and the flag tells the server which of its sends this one
  // answers, so that a resend's ACK shows what was sent before it as lost.
  EmitAck(ctx, ctx.header.flags & wire::kFlagRetransmission, state, out);
}

}  // namespace libra::dataplane
