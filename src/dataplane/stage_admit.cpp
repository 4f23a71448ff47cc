#include "stages.h"

namespace libra::dataplane {
namespace {

using wire::MessageType;

// The path table: (message type, sender role) -> path. Pairs not listed are
// messages the switch never receives from that sender (kDrop).
struct PathEntry {
  MessageType type;
  PeerRole role;
  Path path;
  bool carries_slots;
};
constexpr PathEntry kPathTable[] = {
    {MessageType::kData, PeerRole::kWorker, Path::kData, true},
    {MessageType::kFin, PeerRole::kWorker, Path::kFin, false},
    {MessageType::kCollect, PeerRole::kServer, Path::kCollect, true},
    {MessageType::kUpdate, PeerRole::kServer, Path::kUpdate, true},
};

const PathEntry* MatchPath(MessageType type, PeerRole role) {
  for (const PathEntry& entry : kPathTable) {
    if (entry.type == type && entry.role == role) return &entry;
  }
  return nullptr;
}

Path Drop(DropReason reason, PipelineState& state) {
  state.counters.Count(reason);
  return Path::kDrop;
}

}  // namespace

Path AdmitStage(PacketContext& ctx, PipelineState& state) {
  const wire::Header& header = ctx.header();
  // A probe is answered whether or not a job is installed: the controller
  // probes a restarted switch before it reinstalls the job.
  if (header.type == MessageType::kProbe) return Path::kProbe;
  if (!state.job) return Drop(DropReason::kNoJob, state);
  if (header.job_id != state.job->job_id) return Drop(DropReason::kWrongJob, state);

  const auto peer = state.peers.find(ctx.source.Key());
  if (peer == state.peers.end()) return Drop(DropReason::kUnknownPeer, state);
  ctx.peer = peer->second;

  const PathEntry* entry = MatchPath(header.type, ctx.peer.role);
  if (entry == nullptr) return Drop(DropReason::kUnexpectedType, state);
  if (header.node_id != ctx.peer.id) return Drop(DropReason::kNodeIdMismatch, state);
  if (header.epoch > kMaxEpoch) return Drop(DropReason::kEpochOutOfRange, state);

  const std::size_t max_slots = entry->carries_slots ? state.slots_per_packet : 0;
  if (header.slot_count > max_slots) return Drop(DropReason::kTooManySlots, state);
  for (std::size_t j = 0; j < header.slot_count; ++j) {
    const wire::Slot& slot = ctx.message.slots[j];
    if (slot.valid && slot.index >= state.cells_per_array) {
      return Drop(DropReason::kCellIndexOutOfRange, state);
    }
  }

  ctx.epoch_tag = EpochTag(header.epoch);
  ctx.bank = BankOf(header.epoch);
  return entry->path;
}

}  // namespace libra::dataplane
