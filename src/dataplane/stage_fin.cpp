#include "dataplane/stages.h"

namespace libra::dataplane {

void FinStage(PacketContext& ctx, PipelineState& state, OutputBatch& out) {
  const wire::Header& header = ctx.header;
  const std::size_t worker = ctx.peer.id;
  state.counters.Count(Event::kFinPackets);

  // A worker sends FIN right behind its last DATA of the epoch; over one FIFO
  // path the switch has then seen all `seq` of them, unless one was lost. A
  // FIN with another count is dropped: the worker resends it once every DATA
  // is ACKed.
  const ReadInEpoch::Output seen =
      state.data_count.Execute(ctx.pass, worker * 2 + ctx.bank, ReadInEpoch{ctx.epoch_tag});
  if (seen.newer_epoch_stored) {
    state.counters.Count(DropReason::kStaleEpoch);
    return;
  }
  if (seen.lo != header.seq) {
    state.counters.Count(DropReason::kFinCountMismatch);
    return;
  }

  if (state.fin_seen.Execute(ctx.pass, worker, MarkEpochOnce{ctx.epoch_tag}) ==
      SeqVerdict::kDuplicate) {
    state.counters.Count(Event::kFinDuplicates);
    EmitAck(ctx, wire::kFlagFin | wire::kFlagDuplicate, state, out);
    return;
  }

  const CountInEpoch::Output finished =
      state.fin_count.Execute(ctx.pass, ctx.bank, CountInEpoch{ctx.epoch_tag});
  EmitAck(ctx, wire::kFlagFin, state, out);
  if (finished.count != state.workers) return;

  // READY goes to every server (the multicast group of the job's servers).
  state.counters.Count(Event::kEpochsReady);
  wire::Header ready;
  ready.type = wire::MessageType::kReady;
  ready.job_id = header.job_id;
  ready.epoch = header.epoch;
  for (std::size_t s = 0; s < state.job->servers.size(); ++s) {
    ready.node_id = static_cast<std::uint16_t>(s);
    EmitHeader(ready, state.job->servers[s], state, out);
    state.counters.Count(Event::kReadySent);
  }
}

}  // namespace libra::dataplane
