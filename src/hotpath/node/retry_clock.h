// The retransmission timeout of one engine: exponential backoff from a base
// timeout, back to the base when a round trip is measured, and a count
// of timeouts in a row that says when to give up. The base follows the
// measured round-trip time as TCP's does (RFC 6298: smoothed RTT plus four
// times its variation), kept within the policy's initial and maximum
// timeouts, so a slow or queued link is not flooded with resends of packets
// that are merely late. Samples come only from packets sent once (Karn).
#pragma once

#include <algorithm>
#include <chrono>

#include "hotpath/node/hot_path_options.h"

namespace libra::hotpath {

class RetryClock {
 public:
  explicit RetryClock(const RetryPolicy& policy)
      : policy_(policy), base_(policy.initial_timeout), timeout_(policy.initial_timeout) {}

  std::chrono::microseconds timeout() const { return timeout_; }
  std::chrono::microseconds base_timeout() const { return base_; }
  int timeouts_in_a_row() const { return timeouts_in_a_row_; }
  // The smoothed round-trip time of the samples so far (0 before the first).
  std::chrono::microseconds smoothed_rtt() const { return srtt_; }

  // The switch answered something new: it is alive. The backed-off timeout
  // stays until a round trip is measured (Karn's rule): an answer to a resent
  // packet says nothing about how long the first send took, and returning to
  // a short timeout there would resend every packet of a slow link again.
  void OnProgress() { timeouts_in_a_row_ = 0; }

  // The round trip of a packet that was sent once and then answered.
  void OnRttSample(std::chrono::microseconds rtt) {
    using std::chrono::microseconds;
    if (!have_rtt_) {
      srtt_ = rtt;
      rttvar_ = rtt / 2;
      have_rtt_ = true;
    } else {
      const microseconds error = srtt_ > rtt ? srtt_ - rtt : rtt - srtt_;
      rttvar_ = (3 * rttvar_ + error) / 4;
      srtt_ = (7 * srtt_ + rtt) / 8;
    }
    base_ = std::clamp<microseconds>(srtt_ + 4 * rttvar_, policy_.min_timeout, policy_.max_timeout);
    timeout_ = base_;
  }
  // A timer expired and the caller resends. Returns false once the policy's
  // retries are spent: the switch is to be reported unresponsive.
  bool OnTimeout() {
    timeout_ = std::min(timeout_ * 2, policy_.max_timeout);
    return ++timeouts_in_a_row_ <= policy_.max_retries;
  }

 private:
  RetryPolicy policy_;
  std::chrono::microseconds base_;
  std::chrono::microseconds timeout_;
  bool have_rtt_ = false;
  std::chrono::microseconds srtt_{0};
  std::chrono::microseconds rttvar_{0};
  int timeouts_in_a_row_ = 0;
};

}  // namespace libra::hotpath
