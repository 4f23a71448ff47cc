// Whether two switch back ends answered a packet alike: the same output
// packets (destination and every byte, in order) and the same counters.
// Without GoogleTest, so that a fuzz target can abort on a difference as a
// test reports one (switch_backends.h's lockstep back end).
#pragma once

#include <algorithm>
#include <string>

#include "dataplane/counters.h"
#include "dataplane/output_batch.h"

namespace libra::testing {

// "" when expected[expected_first...] and actual[actual_first...] are the
// same packets; else the first difference.
inline std::string DifferentOutputs(const dataplane::OutputBatch& expected,
                                    std::size_t expected_first,
                                    const dataplane::OutputBatch& actual,
                                    std::size_t actual_first) {
  const std::size_t n = expected.size() - expected_first;
  if (actual.size() - actual_first != n) {
    return std::to_string(actual.size() - actual_first) + " packets out of one packet in, not " +
           std::to_string(n);
  }
  for (std::size_t i = 0; i < n; ++i) {
    const dataplane::OutputPacket& a = actual[actual_first + i];
    const dataplane::OutputPacket& e = expected[expected_first + i];
    if (!(a.destination == e.destination)) return "output " + std::to_string(i) + ": destination";
    if (!std::ranges::equal(a.payload(), e.payload())) {
      return "output " + std::to_string(i) + ": bytes";
    }
  }
  return "";
}

// "" when every counter is the same; else the first that differs.
inline std::string DifferentCounters(const dataplane::ProgramCounters& expected,
                                     const dataplane::ProgramCounters& actual) {
  for (std::size_t i = 0; i < expected.drops.size(); ++i) {
    if (expected.drops[i] != actual.drops[i]) {
      return "drop " +
             std::string(dataplane::DropReasonName(static_cast<dataplane::DropReason>(i))) + ": " +
             std::to_string(actual.drops[i]) + ", not " + std::to_string(expected.drops[i]);
    }
  }
  for (std::size_t i = 0; i < expected.events.size(); ++i) {
    if (expected.events[i] != actual.events[i]) {
      return "event " + std::string(dataplane::EventName(static_cast<dataplane::Event>(i))) + ": " +
             std::to_string(actual.events[i]) + ", not " + std::to_string(expected.events[i]);
    }
  }
  return "";
}

// What one packet added to the counters.
inline dataplane::ProgramCounters CounterDelta(const dataplane::ProgramCounters& before,
                                               const dataplane::ProgramCounters& after) {
  dataplane::ProgramCounters delta;
  for (std::size_t i = 0; i < delta.drops.size(); ++i)
    delta.drops[i] = after.drops[i] - before.drops[i];
  for (std::size_t i = 0; i < delta.events.size(); ++i) {
    delta.events[i] = after.events[i] - before.events[i];
  }
  return delta;
}

}  // namespace libra::testing
