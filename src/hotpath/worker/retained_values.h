// What a worker keeps of the epochs it pushed, to answer a server's VALUES
// request: the server found sums saturated (the switch's 32-bit cells
// clamped them) and sums those keys again from every worker's own values.
//
// The sender keeps an epoch until its replica is complete; the epochs a
// worker sent to the servers itself (while the switch was down) are kept
// here, the last kEpochsKept of them, since a server applies epochs in
// order and a worker runs at most an epoch or two ahead of the slowest.
//
// Not thread-safe: the worker path calls it under its push lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>

#include "hotpath/messages/control_messages.h"
#include "hotpath/worker/hot_sender.h"

namespace libra::hotpath {

class RetainedValues {
 public:
  static constexpr std::size_t kEpochsKept = 8;

  // Keeps `push`, forgetting the oldest beyond kEpochsKept.
  void Keep(RetainedPush push);

  // The kept push of `epoch`, if it still is.
  std::optional<RetainedPush> Find(std::uint32_t epoch) const;

 private:
  std::deque<RetainedPush> pushes_;
};

// The answer to VALUES for `keys` from worker `worker`'s push `kept` (null:
// the worker no longer has that epoch, and says so with kNotRetained).
FallbackPush ValuesOfKeys(const RetainedPush* kept, std::uint32_t worker,
                          std::span<const hot::Key> keys);

}  // namespace libra::hotpath
