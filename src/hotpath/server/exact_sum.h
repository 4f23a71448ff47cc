// The sum a server computes itself for a hot value the switch could not sum
// exactly (its 32-bit fixed-point sum saturated, or a value was too large
// for the scale 2^F): each worker's value scaled by 2^F and rounded to an
// integer (to nearest, ties away from zero, as the switch's table rounds),
// added in 64 bits, and the sum scaled back to float32. Integer addition, so
// the result does not depend on the order the workers' values arrive in.
// The switch adds nothing for an infinity or NaN and flags the sum; here
// they make the sum what the plain parameter server's float sum is (Value).
#pragma once

#include <cstdint>

namespace libra::hotpath {

class ExactSum {
 public:
  // Throws std::invalid_argument outside the switch's scales [0, 30].
  explicit ExactSum(int scale_bits);

  void Add(float value);
  // The sum as float32. An infinity or NaN among the values makes it what
  // float addition makes it, whatever the order (NaN, or both infinities:
  // NaN; else the infinity), as the plain parameter server's sum is.
  float Value() const;
  // Whether some value, or the sum, was beyond even 64 bits at this scale
  // (|x| 2^F >= 2^62): then Value() is the values' sum in double precision
  // rounded to float32, which, like the plain parameter server's float sum,
  // may differ in its last bit with the order of the values.
  bool wide() const { return wide_; }

 private:
  int scale_bits_;
  std::int64_t sum_ = 0;  // of the finite values
  double wide_sum_ = 0;   // the same in double precision, for a wide sum
  bool wide_ = false;
  bool nan_ = false;
  bool positive_infinity_ = false;
  bool negative_infinity_ = false;
};

}  // namespace libra::hotpath
