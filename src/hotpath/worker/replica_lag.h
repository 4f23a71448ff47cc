// When a worker repairs its whole replica. Lost REPLICAs of an epoch leave
// the replica behind, and the sender will not start epoch e+2 before epoch
// e is complete (the switch's banks). A pull repairs the keys it reads, and
// the sender reports partial gaps; this covers the rest: a replica that has
// stayed more than one epoch behind the last push for `repair_after` asks
// the servers for everything they published.
//
// Not thread-safe: one thread (the worker path's watchdog) owns it.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

namespace libra::hotpath {

class ReplicaLag {
 public:
  using Clock = std::chrono::steady_clock;

  explicit ReplicaLag(Clock::duration repair_after) : repair_after_(repair_after) {}

  // The epoch a replica lags at: the first one it lacks, when it has not
  // reached `last_pushed - 1` (a replica one epoch behind is normal: the
  // last epoch is being aggregated). `reached`: the replica's epoch, if it
  // has any; `first_epoch`: the sender's first.
  static std::optional<std::uint32_t> LaggingEpoch(std::optional<std::uint32_t> reached,
                                                   std::uint32_t last_pushed,
                                                   std::uint32_t first_epoch);

  // Looks at the replica at `now` (`lagging`: LaggingEpoch's answer). Once
  // it has lagged `repair_after` without a break, returns the epoch to
  // repair and starts counting again.
  std::optional<std::uint32_t> Observe(Clock::time_point now, std::optional<std::uint32_t> lagging);

 private:
  const Clock::duration repair_after_;
  std::optional<Clock::time_point> behind_since_;
};

}  // namespace libra::hotpath
