// Everything the switch program keeps between packets: the installed job and
// its match tables (written by the control plane), the register arrays, and
// the counters.
#pragma once

#include <cstdint>
#include <optional>

#include "dataplane/counters.h"
#include "dataplane/peer_table.h"
#include "dataplane/register_array.h"
#include "dataplane/register_array_group.h"
#include "wire/fixed_point.h"
#include "wire/pipeline_profile.h"
#include "wire/switch_job.h"

namespace libra::dataplane {

struct PipelineState {
  PipelineProfile profile;

  std::optional<SwitchJob> job;
  std::optional<FixedPointCodec> codec;  // the conversion tables for the job's F
  PeerTable peers;                       // source address -> worker or server
  std::uint32_t cells_per_array = 0;
  std::uint16_t slots_per_packet = 0;
  std::uint32_t workers = 0;

  RegisterArray<RegisterPair> dedup_window;  // [worker * W + seq % W] = (epoch tag, seq)
  RegisterArray<RegisterPair> data_count;    // [worker * 2 + bank] = (epoch tag, DATA seen)
  RegisterArray<RegisterPair> fin_seen;      // [worker] = (epoch tag of its last FIN, -)
  RegisterArray<RegisterPair> fin_count;     // [bank] = (epoch tag, workers finished)
  RegisterArrayGroup values;                 // array j, [bank * cells + index] = (tag|sat, sum)

  ProgramCounters counters;
};

// The bank an epoch aggregates into: epochs e and e + 1 never share one.
inline std::uint32_t BankOf(std::uint32_t epoch) { return epoch & 1u; }

}  // namespace libra::dataplane
