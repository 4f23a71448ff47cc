// The stages of the switch program, in the order a packet meets them. Each is
// a function of the packet's context and the pipeline state, defined in its
// own stage_*.cpp file; program.cpp strings them together.
//
//   parse -> admit -+-> DATA:    dedup -> convert -> aggregate -> ACK
//                   +-> FIN:     check DATA count -> FIN once -> count FINs -> ACK (+ READY)
//                   +-> COLLECT: readiness -> read cells -> to float32 -> RESULT
//                   +-> UPDATE:  replicate to every worker (REPLICA)
//                   +-> PROBE:   PROBE_REPLY
#pragma once

#include <cstdint>
#include <span>

#include "dataplane/output_batch.h"
#include "dataplane/packet_context.h"
#include "dataplane/pipeline_state.h"
#include "dataplane/stateful_ops.h"

namespace libra::dataplane {

enum class Path : std::uint8_t { kDrop, kData, kFin, kCollect, kUpdate, kProbe };

// Decodes the header and slots; false (counted) when malformed.
bool ParseStage(std::span<const std::uint8_t> bytes, PacketContext& ctx, PipelineState& state);

// Job, peer, type, node id, epoch and slot checks; picks the path.
Path AdmitStage(PacketContext& ctx, PipelineState& state);

// DATA: records (worker, epoch, seq) in the dedup window and counts the new
// packet towards the worker's epoch.
SeqVerdict DedupStage(PacketContext& ctx, PipelineState& state);

// DATA: float32 -> fixed point of every valid slot.
void ConvertStage(PacketContext& ctx, PipelineState& state);

// DATA: adds every valid slot into its cell of the epoch's bank.
void AggregateStage(PacketContext& ctx, PipelineState& state);

// FIN: counts the worker finished and emits ACK, and READY when it is the last.
void FinStage(PacketContext& ctx, PipelineState& state, OutputBatch& out);

// COLLECT: answers with RESULT (or RESULT flagged not-ready).
void CollectStage(PacketContext& ctx, PipelineState& state, OutputBatch& out);

// UPDATE: one REPLICA to every worker of the job.
void ReplicateStage(PacketContext& ctx, PipelineState& state, OutputBatch& out);

// Deparser: writes a reply header (no slots) to `destination`.
void EmitHeader(const wire::Header& header, const UdpEndpoint& destination, PipelineState& state,
                OutputBatch& out);

// DATA and FIN: the ACK back to the worker.
void EmitAck(const PacketContext& ctx, std::uint16_t flags, PipelineState& state, OutputBatch& out);

}  // namespace libra::dataplane
