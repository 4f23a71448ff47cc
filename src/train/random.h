// A small, fully specified random generator: generated data must be the same
// bytes for a seed on every platform and library, which std::mt19937 plus
// std::*_distribution does not promise.
#pragma once

#include <cmath>
#include <cstdint>

#include "data/feature_hash.h"

namespace libra::train {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() { return Mix64(state_ += 0x9e3779b97f4a7c15ULL); }
  // Uniform in [0, 1).
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  // Standard normal (Box-Muller; one of the pair is thrown away for simplicity).
  double Normal() {
    const double u1 = 1.0 - Uniform();  // (0, 1]: log is finite
    const double u2 = Uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  uint64_t state_;
};

}  // namespace libra::train
