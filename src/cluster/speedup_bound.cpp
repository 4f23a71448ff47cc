#include "cluster/speedup_bound.h"

#include <algorithm>
#include <stdexcept>

namespace libra::cluster {

SpeedupBound PredictSpeedup(int workers, int servers, double hot_share, double overlap) {
  if (workers < 1 || servers < 1 || !(hot_share >= 0 && hot_share <= 1) ||
      !(overlap >= 1 && overlap <= workers)) {
    throw std::invalid_argument(
        "speedup bound: need workers >= 1, servers >= 1, 0 <= h <= 1, 1 <= overlap <= workers");
  }
  const double n = workers, m = servers, h = hot_share;
  SpeedupBound b;
  b.plain_link_units = std::max(n / m, 1.0);
  b.libra_link_units = std::max(((1 - h) * n + h * overlap) / m, 1.0);
  b.speedup = b.plain_link_units / b.libra_link_units;
  return b;
}

}  // namespace libra::cluster
