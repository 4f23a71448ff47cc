#include "hotpath/server/exact_sum.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace libra::hotpath {
namespace {

// Far below INT64_MAX: a value beyond it makes the sum wide (summed in
// double precision instead).
constexpr double kLimit = 4611686018427387904.0;  // 2^62

}  // namespace

ExactSum::ExactSum(int scale_bits) : scale_bits_(scale_bits) {
  if (scale_bits < 0 || scale_bits > 30) {
    throw std::invalid_argument("exact sum: scale bits " + std::to_string(scale_bits) +
                                " outside [0, 30]");
  }
}

void ExactSum::Add(float value) {
  if (std::isnan(value)) {
    nan_ = true;
    return;
  }
  if (std::isinf(value)) {
    (value > 0 ? positive_infinity_ : negative_infinity_) = true;
    return;
  }
  wide_sum_ += value;
  if (wide_) return;
  const double scaled = std::ldexp(static_cast<double>(value), scale_bits_);  // exact
  if (std::fabs(scaled) >= kLimit) {
    wide_ = true;
    return;
  }
  // std::llround rounds halves away from zero, like the switch's table.
  const std::int64_t fixed = std::llround(scaled);
  if (__builtin_add_overflow(sum_, fixed, &sum_)) wide_ = true;
}

float ExactSum::Value() const {
  if (nan_ || (positive_infinity_ && negative_infinity_)) {
    return std::numeric_limits<float>::quiet_NaN();
  }
  if (positive_infinity_) return std::numeric_limits<float>::infinity();
  if (negative_infinity_) return -std::numeric_limits<float>::infinity();
  if (wide_) return static_cast<float>(wide_sum_);
  return static_cast<float>(std::ldexp(static_cast<double>(sum_), -scale_bits_));
}

}  // namespace libra::hotpath
