#include "dataplane/stages.h"

namespace libra::dataplane {
namespace {

using wire::MessageType;

// The path table: (message type, sender role) -> path. Pairs not listed are
// messages the switch never receives from that sender (kDrop).
// `max_slots`: how many slots the message may carry (none, the job's P), or
// kAnyCount for a payload of other things than slots.
enum class SlotLimit : std::uint8_t { kNone, kJobSlots, kAnyCount };
struct PathEntry {
  MessageType type;
  PeerRole role;
  Path path;
  SlotLimit max_slots;
};
constexpr PathEntry kPathTable[] = {
    {MessageType::kData, PeerRole::kWorker, Path::kData, SlotLimit::kJobSlots},
    {MessageType::kFin, PeerRole::kWorker, Path::kFin, SlotLimit::kNone},
    {MessageType::kCollect, PeerRole::kServer, Path::kCollect, SlotLimit::kJobSlots},
    // slot_count of an UPDATE counts the values of its row blocks.
    {MessageType::kUpdate, PeerRole::kServer, Path::kUpdate, SlotLimit::kAnyCount},
};

const PathEntry* MatchPath(MessageType type, PeerRole role) {
  for (const PathEntry& entry : kPathTable) {
    if (entry.type == type && entry.role == role) return &entry;
  }
  return nullptr;
}

// The slots among the first `count` whose cell index is `cells` or more.
LIBRA_SLOT_KERNEL std::uint64_t SlotsOutOfRange(const std::uint32_t* __restrict index,
                                                std::size_t count, std::uint32_t cells) {
  return SlotMask(count, [&](std::size_t j) { return index[j] >= cells; });
}

Path Drop(DropReason reason, PipelineState& state) {
  state.counters.Count(reason);
  return Path::kDrop;
}

}  // namespace

Path AdmitStage(PacketContext& ctx, PipelineState& state) {
  const wire::Header& header = ctx.header;
  // A probe is answered whether or not a job is installed: the controller
  // probes a restarted switch before it reinstalls the job.
  if (header.type == MessageType::kProbe) return Path::kProbe;
  if (!state.job) [[unlikely]]
    return Drop(DropReason::kNoJob, state);
  if (header.job_id != state.job->job_id) [[unlikely]]
    return Drop(DropReason::kWrongJob, state);

  const Peer* peer = state.peers.Find(ctx.source);
  if (peer == nullptr) [[unlikely]]
    return Drop(DropReason::kUnknownPeer, state);
  ctx.peer = *peer;

  const PathEntry* entry = MatchPath(header.type, ctx.peer.role);
  if (entry == nullptr) [[unlikely]]
    return Drop(DropReason::kUnexpectedType, state);
  if (header.node_id != ctx.peer.id) [[unlikely]]
    return Drop(DropReason::kNodeIdMismatch, state);
  if (header.epoch > kMaxEpoch) [[unlikely]]
    return Drop(DropReason::kEpochOutOfRange, state);

  // An UPDATE's row blocks are not slots: nothing below looks at them.
  const std::size_t slots = entry->max_slots == SlotLimit::kAnyCount ? 0 : header.slot_count;
  const std::size_t max_slots =
      entry->max_slots == SlotLimit::kJobSlots ? state.slots_per_packet : 0;
  if (slots > max_slots) [[unlikely]]
    return Drop(DropReason::kTooManySlots, state);
  // One pass over all slots without a branch per slot: which indices are out
  // of range, masked by the valid ones (an invalid slot's index means nothing).
  const std::uint64_t out_of_range =
      SlotsOutOfRange(ctx.index.data(), slots, state.cells_per_array);
  if ((out_of_range & ctx.valid_slots) != 0) [[unlikely]] {
    return Drop(DropReason::kCellIndexOutOfRange, state);
  }

  ctx.epoch_tag = EpochTag(header.epoch);
  ctx.bank = BankOf(header.epoch);
  return entry->path;
}

}  // namespace libra::dataplane
