// The metadata one packet carries through the stages (the PHV of a P4
// program): the parsed header, the slots as separate fields, what the stages
// decided and the converted values.
//
// The slots are kept as parallel arrays plus a bit mask of the valid ones
// rather than as wire::Slot structs: every stage reads one or two fields of
// every slot, and arrays of plain words let those loops run without unpacking
// or branching on each slot.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "dataplane/pipeline_state.h"
#include "dataplane/register_array.h"
#include "dataplane/slot_loops.h"
#include "wire/fixed_point.h"
#include "wire/switch_job.h"
#include "wire/wire.h"

namespace libra::dataplane {

struct PacketContext {
  PassId pass = 0;
  UdpEndpoint source;
  std::span<const std::uint8_t> bytes;  // the packet as received, for this pass only
  wire::Header header;
  // Slot j (j < header.slot_count): its valid bit in valid_slots, the cell
  // index and the value word. (The S bit is only ever set by the switch.)
  std::uint64_t valid_slots = 0;
  alignas(32) std::array<std::uint32_t, wire::kMaxSlots> index;
  alignas(32) std::array<std::uint32_t, wire::kMaxSlots> value;

  Peer peer;
  std::uint32_t epoch_tag = 0;
  std::uint32_t bank = 0;

  // ConvertStage: the fixed-point value of every slot, and whether every
  // valid slot converted cleanly (the usual case). Only when one did not
  // does `status` hold each valid slot's status (saturated, or rejected:
  // infinity, NaN).
  alignas(32) std::array<std::int32_t, wire::kMaxSlots> fixed;
  bool all_values_ok = true;
  std::array<ConversionStatus, wire::kMaxSlots> status;

  // Slot j as the wire format's struct, without the S bit.
  wire::Slot slot(std::size_t j) const {
    return wire::Slot{((valid_slots >> j) & 1) != 0, false, index[j], value[j]};
  }
};

}  // namespace libra::dataplane
