// The retransmission timeout of one engine: exponential backoff from the
// policy's initial timeout, reset whenever the switch makes progress, and a
// count of timeouts in a row that says when to give up.
#pragma once

#include <algorithm>
#include <chrono>

#include "libra/hotpath_options.h"

namespace libra::hotpath {

class RetryClock {
 public:
  explicit RetryClock(const RetryPolicy& policy)
      : policy_(policy), timeout_(policy.initial_timeout) {}

  std::chrono::microseconds timeout() const { return timeout_; }
  int timeouts_in_a_row() const { return timeouts_in_a_row_; }

  // The switch answered something new: back to the initial timeout.
  void OnProgress() {
    timeout_ = policy_.initial_timeout;
    timeouts_in_a_row_ = 0;
  }
  // A timer expired and the caller resends. Returns false once the policy's
  // retries are spent: the switch is to be reported unresponsive.
  bool OnTimeout() {
    timeout_ = std::min(timeout_ * 2, policy_.max_timeout);
    return ++timeouts_in_a_row_ <= policy_.max_retries;
  }

 private:
  RetryPolicy policy_;
  std::chrono::microseconds timeout_;
  int timeouts_in_a_row_ = 0;
};

}  // namespace libra::hotpath
