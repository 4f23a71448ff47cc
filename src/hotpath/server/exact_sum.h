// The sum a server computes itself for a hot value the switch could not sum
// exactly (its 32-bit fixed-point sum saturated, or a value was too large
// for the scale 2^F): each worker's value scaled by 2^F and rounded to an
// integer (to nearest, ties away from zero, as the switch's table rounds),
// added in 64 bits, and the sum scaled back to float32. Integer addition, so
// the result does not depend on the order the workers' values arrive in;
// infinities and NaN are left out, as the switch leaves them out.
#pragma once

#include <cstdint>

namespace libra::hotpath {

class ExactSum {
 public:
  // Throws std::invalid_argument outside the switch's scales [0, 30].
  explicit ExactSum(int scale_bits);

  void Add(float value);
  float Value() const;
  // Whether some value was beyond even 64 bits at this scale (|x| 2^F >=
  // 2^62) and was clamped: then the sum is still not exact.
  bool clamped() const { return clamped_; }

 private:
  int scale_bits_;
  std::int64_t sum_ = 0;
  bool clamped_ = false;
};

}  // namespace libra::hotpath
