// What the two host-side engines of the hot path (HotSender on workers,
// HotCollector on servers) share: how they retry, and how an epoch ended.
#pragma once

#include <chrono>
#include <cstdint>
#include <string_view>

namespace libra::hotpath {

// Retransmission on timeout with exponential backoff. The timeout starts at
// `initial_timeout`, doubles after every timeout up to `max_timeout`, and
// returns to a base whenever the switch answers: `initial_timeout` until
// round trips are measured, then smoothed RTT + 4 x its variation, within
// `min_timeout` and `max_timeout` (src/hotpath/retry_clock.h). After
// `max_retries` timeouts in a row without any answer the switch is reported
// unresponsive; the worst case before that report is bounded by
// ~ initial * 2^k + (max_retries - k) * max_timeout.
struct RetryPolicy {
  std::chrono::microseconds initial_timeout{std::chrono::milliseconds(2)};
  // Below the measured base no timer goes: a loopback round trip through a
  // busy user-space switch varies by more than its mean. Not higher: every
  // packet lost at the tail of a window (DATA, COLLECT, UPDATE, a FIN) waits
  // the base; at 2 ms, the floor before, a loopback job with 5 % loss ran
  // at 0.53x of its lossless speed, at 0.5 ms 0.75x (2026-12-04).
  std::chrono::microseconds min_timeout{500};
  std::chrono::microseconds max_timeout{std::chrono::milliseconds(400)};
  int max_retries = 12;

  // Throws std::invalid_argument naming the bad field.
  void Validate() const;
};

enum class HotPathStatus : std::uint8_t {
  kOk,                  // done
  kSwitchUnresponsive,  // retries exhausted: the caller falls back to the servers
  kTimeout,             // a bounded wait ran out (Pull)
  kShutdown,            // the engine was destroyed before it finished
};
std::string_view HotPathStatusName(HotPathStatus status);

}  // namespace libra::hotpath
