// A RESULT is compacted (only the cells written in the epoch, each slot
// naming the COLLECT slot it answers); tests that compare whole rows spread
// it back over the COLLECT's slots.
#pragma once

#include <array>

#include "wire/wire.h"

namespace libra::testing {

// Slot j holds the answer to COLLECT slot j, or an invalid zero slot (the
// cell was not written, so its sum is 0).
inline std::array<wire::Slot, wire::kMaxSlots> ResultBySlot(const wire::Message& result) {
  std::array<wire::Slot, wire::kMaxSlots> by_slot{};
  for (std::size_t i = 0; i < result.header.slot_count; ++i) {
    const wire::Slot& slot = result.slots[i];
    if (slot.index < by_slot.size()) by_slot[slot.index] = slot;
  }
  return by_slot;
}

}  // namespace libra::testing
