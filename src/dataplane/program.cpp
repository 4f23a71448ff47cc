#include "dataplane/program.h"

#include "dataplane/stages.h"

namespace libra::dataplane {

Program::Program(PipelineProfile profile) { state_.profile = std::move(profile); }

InstallResult Program::InstallJob(const SwitchJob& job) {
  InstallResult result;
  const JobShape shape{static_cast<int>(job.workers.size()), static_cast<int>(job.servers.size()),
                       job.cells_per_array, job.slots_per_packet, job.scale_bits};
  result.fit = PlaceRegisters(state_.profile, shape);
  if (!result.fit.fits) {
    result.error = "job does not fit profile " + state_.profile.name + ":";
    for (const auto& problem : result.fit.problems) result.error += " " + problem + ";";
    return result;
  }
  PeerTable peers;
  auto add_peers = [&peers](const std::vector<UdpEndpoint>& endpoints, PeerRole role) {
    for (std::size_t i = 0; i < endpoints.size(); ++i) {
      if (!peers.Insert(endpoints[i], Peer{role, static_cast<std::uint16_t>(i)})) {
        return "address " + endpoints[i].ToString() + " appears twice in the job";
      }
    }
    return std::string();
  };
  result.error = add_peers(job.workers, PeerRole::kWorker);
  if (result.error.empty()) result.error = add_peers(job.servers, PeerRole::kServer);
  if (!result.error.empty()) return result;

  state_.job = job;
  state_.codec.emplace(job.scale_bits);
  state_.peers = std::move(peers);
  state_.cells_per_array = job.cells_per_array;
  state_.slots_per_packet = static_cast<std::uint16_t>(job.slots_per_packet);
  state_.workers = static_cast<std::uint32_t>(job.workers.size());
  std::size_t value_arrays = 0;
  std::size_t value_cells = 0;
  for (const RegisterArrayPlacement& array : result.fit.arrays) {
    auto registers = [&array] { return RegisterArray<RegisterPair>(array.name, array.entries); };
    if (array.name == kDedupArray) {
      state_.dedup_window = registers();
    } else if (array.name == kDataCountArray) {
      state_.data_count = registers();
    } else if (array.name == kFinSeenArray) {
      state_.fin_seen = registers();
    } else if (array.name == kFinCountArray) {
      state_.fin_count = registers();
    } else {  // value_0 .. value_{P-1}, in order, all of one size
      ++value_arrays;
      value_cells = array.entries;
    }
  }
  state_.values = RegisterArrayGroup(std::string(kValueArrayPrefix), value_arrays, value_cells);
  result.ok = true;
  return result;
}

void Program::RemoveJob() {
  state_.job.reset();
  state_.codec.reset();
  state_.peers.Clear();
  state_.values = {};
  state_.dedup_window = {};
  state_.data_count = {};
  state_.fin_seen = {};
  state_.fin_count = {};
}

void Program::Process(std::span<const std::uint8_t> packet, const UdpEndpoint& source,
                      OutputBatch& out) {
  PacketContext& ctx = ctx_;
  ctx.pass = next_pass_++;
  ctx.source = source;
  state_.counters.Count(Event::kPacketsIn);
  if (!ParseStage(packet, ctx, state_)) return;
  if ((ctx.header.flags & wire::kFlagRetransmission) != 0) {
    state_.counters.Count(Event::kRetransmissions);
  }

  switch (AdmitStage(ctx, state_)) {
    case Path::kDrop:
      return;
    case Path::kData:
      state_.counters.Count(Event::kDataPackets);
      if (DedupStage(ctx, state_) == SeqVerdict::kDuplicate) {
        // Added before: ACK again (the first ACK may be the one lost), add nothing.
        state_.counters.Count(Event::kDataDuplicates);
        EmitAck(ctx, wire::kFlagDuplicate, state_, out);
        return;
      }
      ConvertStage(ctx, state_);
      AggregateStage(ctx, state_);
      // Echoing RETRANSMISSION tells the worker which copy was added: a
      // resend (the first send was lost) or the first send (late, not lost).
      EmitAck(ctx, ctx.header.flags & wire::kFlagRetransmission, state_, out);
      return;
    case Path::kFin:
      FinStage(ctx, state_, out);
      return;
    case Path::kCollect:
      CollectStage(ctx, state_, out);
      return;
    case Path::kUpdate:
      ReplicateStage(ctx, state_, out);
      return;
    case Path::kProbe: {
      state_.counters.Count(Event::kProbes);
      wire::Header reply = ctx.header;
      reply.type = wire::MessageType::kProbeReply;
      EmitHeader(reply, source, state_, out);
      return;
    }
  }
}

}  // namespace libra::dataplane
