#include "train/alias_table.h"

#include <numeric>
#include <stdexcept>

namespace libra::train {

AliasTable::AliasTable(const std::vector<double>& weights)
    : size_(weights.size()), threshold_(weights.size()), alias_(weights.size()) {
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  if (weights.empty() || !(total > 0)) {
    throw std::invalid_argument("AliasTable needs a positive total weight");
  }
  // Vose's construction: columns below the average borrow from those above.
  std::vector<double> scaled(size_);
  std::vector<uint32_t> small, large;
  for (uint32_t i = 0; i < size_; ++i) {
    scaled[i] = weights[i] * static_cast<double>(size_) / total;
    (scaled[i] < 1.0 ? small : large).push_back(i);
  }
  constexpr double kScale = 4294967296.0;
  auto set_threshold = [&](uint32_t i, double fraction) {
    const double t = fraction * kScale;
    threshold_[i] = t >= kScale ? 0xffffffffu : static_cast<uint32_t>(t);
  };
  while (!small.empty() && !large.empty()) {
    const uint32_t s = small.back(), l = large.back();
    small.pop_back();
    set_threshold(s, scaled[s]);
    alias_[s] = l;
    scaled[l] -= 1.0 - scaled[s];
    if (scaled[l] < 1.0) {
      large.pop_back();
      small.push_back(l);
    }
  }
  // What is left is 1.0 up to rounding.
  for (uint32_t i : large) set_threshold(i, 1.0), alias_[i] = i;
  for (uint32_t i : small) set_threshold(i, 1.0), alias_[i] = i;
}

}  // namespace libra::train
