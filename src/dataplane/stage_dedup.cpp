#include "dataplane/stages.h"

namespace libra::dataplane {

SeqVerdict DedupStage(PacketContext& ctx, PipelineState& state) {
  const wire::Header& header = ctx.header;
  const auto window = static_cast<std::uint32_t>(state.profile.dedup_window);
  const std::size_t cell = std::size_t{ctx.peer.id} * window + header.seq % window;
  const SeqVerdict verdict =
      state.dedup_window.Execute(ctx.pass, cell, RecordSeq{ctx.epoch_tag, header.seq});
  if (verdict == SeqVerdict::kNew) {
    state.data_count.Execute(ctx.pass, std::size_t{ctx.peer.id} * 2 + ctx.bank,
                             CountInEpoch{ctx.epoch_tag});
  }
  return verdict;
}

}  // namespace libra::dataplane
