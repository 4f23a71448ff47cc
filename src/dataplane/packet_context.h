// The metadata one packet carries through the stages (the PHV of a P4
// program): the parsed message, what the stages decided, the converted values.
#pragma once

#include <array>
#include <cstdint>

#include "libra/pipeline_fixed_point.h"
#include "libra/switch_job.h"
#include "libra/wire.h"
#include "pipeline_state.h"
#include "register_array.h"

namespace libra::dataplane {

struct PacketContext {
  PassId pass = 0;
  UdpEndpoint source;
  wire::Message message;
  Peer peer;
  std::uint32_t epoch_tag = 0;
  std::uint32_t bank = 0;
  std::array<FixedValue, wire::kMaxSlots> fixed;

  const wire::Header& header() const { return message.header; }
};

}  // namespace libra::dataplane
