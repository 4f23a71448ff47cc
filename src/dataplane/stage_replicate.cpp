#include "stages.h"

namespace libra::dataplane {

void ReplicateStage(PacketContext& ctx, PipelineState& state, OutputBatch& out) {
  state.counters.Count(Event::kUpdatePackets);
  wire::Header replica = ctx.header();
  replica.type = wire::MessageType::kReplica;
  // The packet replication engine makes one copy per worker; the payload is
  // carried as is (parameters are float32 and need no arithmetic).
  for (const UdpEndpoint& worker : state.job->workers) {
    OutputPacket& packet = out.Append();
    packet.destination = worker;
    packet.length =
        static_cast<std::uint16_t>(wire::Encode(replica, ctx.message.slots, packet.bytes));
  }
  state.counters.Count(Event::kReplicasSent, state.job->workers.size());
  state.counters.Count(Event::kPacketsOut, state.job->workers.size());
}

}  // namespace libra::dataplane
