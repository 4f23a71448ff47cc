#include "hotpath/node/hot_path_options.h"

#include <stdexcept>

namespace libra::hotpath {

void RetryPolicy::Validate() const {
  if (initial_timeout.count() <= 0) {
    throw std::invalid_argument("retry policy: initial_timeout must be positive");
  }
  if (min_timeout.count() <= 0 || min_timeout > initial_timeout) {
    throw std::invalid_argument(
        "retry policy: min_timeout must be positive and at most initial_timeout");
  }
  if (max_timeout < initial_timeout) {
    throw std::invalid_argument("retry policy: max_timeout must be at least initial_timeout");
  }
  if (max_retries < 0) throw std::invalid_argument("retry policy: max_retries must be >= 0");
}

std::string_view HotPathStatusName(HotPathStatus status) {
  switch (status) {
    case HotPathStatus::kOk:
      return "ok";
    case HotPathStatus::kSwitchUnresponsive:
      return "switch_unresponsive";
    case HotPathStatus::kTimeout:
      return "timeout";
    case HotPathStatus::kShutdown:
      return "shutdown";
  }
  return "unknown";
}

}  // namespace libra::hotpath
