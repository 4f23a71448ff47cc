#include "hotpath/worker/replica_lag.h"

namespace libra::hotpath {

std::optional<std::uint32_t> ReplicaLag::LaggingEpoch(std::optional<std::uint32_t> reached,
                                                      std::uint32_t last_pushed,
                                                      std::uint32_t first_epoch) {
  if (last_pushed <= first_epoch) return std::nullopt;
  if (!reached) return first_epoch;
  if (*reached + 1 < last_pushed) return *reached + 1;
  return std::nullopt;
}

std::optional<std::uint32_t> ReplicaLag::Observe(Clock::time_point now,
                                                 std::optional<std::uint32_t> lagging) {
  if (!lagging) {
    behind_since_.reset();
    return std::nullopt;
  }
  if (!behind_since_) behind_since_ = now;
  if (now - *behind_since_ < repair_after_) return std::nullopt;
  behind_since_.reset();
  return lagging;
}

}  // namespace libra::hotpath
