// Float32 <-> fixed point with integer operations and table lookups only, the
// way a switch without a floating-point unit does it. The switch converts
// every gradient with this code, and a server that aggregates an epoch itself
// (fallback, saturation) calls the very same functions, so both produce the
// same bits. docs/switch.md specifies the arithmetic.
//
// float32 -> fixed (scale 2^F): the 8 exponent bits index a 256-entry table
// whose entry selects an action with constant operands (shift right with a
// rounding bias, shift left, zero, saturate, reject); the sign bit selects
// negation. Rounding is to nearest, ties away from zero, so one value is off
// by at most 2^-(F+1). Magnitudes of 2^(31-F) and above saturate to
// +-INT32_MAX; infinities and NaN are rejected.
//
// fixed -> float32: a 32-entry ternary table matches the leading one of the
// magnitude and selects the exponent field and the shift that aligns the
// mantissa; rounding to nearest, ties away from zero (at most half an ulp).
#pragma once

#include <array>
#include <cstdint>
#include <span>

namespace libra::dataplane {

enum class ConversionStatus : std::uint8_t {
  kOk = 0,     // converted within the error bound (zero: stages OR statuses together)
  kSaturated,  // |x| >= 2^(31-F): clamped to +-INT32_MAX
  kRejected,   // infinity or NaN: never aggregated
};

struct FixedValue {
  std::int32_t value = 0;
  ConversionStatus status = ConversionStatus::kOk;
};

enum class ToFixedAction : std::uint8_t { kZero, kShiftRight, kShiftLeft, kSaturate, kReject };

// One entry of the exponent table: the action and its constant operands. All
// actions share one data path, magnitude = ((((mantissa & mantissa_mask) |
// hidden_bit) + round_bias) >> right_shift) << left_shift, so the entry alone
// decides (kZero and kReject zero the operands; kSaturate makes hidden_bit
// the largest magnitude).
struct ToFixedEntry {
  ToFixedAction action = ToFixedAction::kZero;
  ConversionStatus status = ConversionStatus::kOk;
  std::uint8_t right_shift = 0;
  std::uint8_t left_shift = 0;
  std::uint32_t mantissa_mask = 0;
  std::uint32_t hidden_bit = 0;
  std::uint32_t round_bias = 0;
};

// One entry of the ternary leading-one table: matches magnitudes whose
// highest set bit is `leading_one`. mantissa = (magnitude + round_bias) >>
// right_shift, or magnitude << left_shift; the mantissa keeps its hidden bit
// and lies in [2^23, 2^24], so float bits = exponent_base + mantissa, which
// also carries a rounding overflow into the exponent.
struct LeadingOneEntry {
  std::uint32_t match_value = 0;
  std::uint32_t match_mask = 0;
  std::uint8_t leading_one = 0;
  std::uint8_t right_shift = 0;
  std::uint8_t left_shift = 0;
  std::uint32_t round_bias = 0;
  std::uint32_t exponent_base = 0;  // (biased exponent - 1) << 23
};

class FixedPointCodec {
 public:
  static constexpr int kMinScaleBits = 0;
  static constexpr int kMaxScaleBits = 30;

  // Builds both tables for scale 2^scale_bits; throws std::invalid_argument
  // when scale_bits is outside [kMinScaleBits, kMaxScaleBits].
  explicit FixedPointCodec(int scale_bits);

  int scale_bits() const { return scale_bits_; }

  FixedValue ToFixed(std::uint32_t float_bits) const {
    const ToFixedEntry& entry = exponent_table_[(float_bits >> 23) & 0xffu];
    const std::uint32_t magnitude =
        ((((float_bits & entry.mantissa_mask) | entry.hidden_bit) + entry.round_bias) >>
         entry.right_shift)
        << entry.left_shift;
    const auto positive = static_cast<std::int32_t>(magnitude);
    return {(float_bits >> 31) != 0 ? -positive : positive, entry.status};
  }

  std::uint32_t ToFloatBits(std::int32_t fixed) const {
    if (fixed == 0) return 0;  // the ternary table's default action
    const std::uint32_t sign = fixed < 0 ? 0x80000000u : 0u;
    const std::uint32_t magnitude =
        fixed < 0 ? 0u - static_cast<std::uint32_t>(fixed) : static_cast<std::uint32_t>(fixed);
    const LeadingOneEntry& entry = leading_one_table_[MatchLeadingOne(magnitude)];
    const std::uint32_t mantissa = ((magnitude + entry.round_bias) >> entry.right_shift)
                                   << entry.left_shift;
    return sign | (entry.exponent_base + mantissa);
  }

  // The ternary match, computed with a count-leading-zeros instruction. It
  // gives the same entry as MatchLeadingOneByPriority (tested); magnitude != 0.
  static int MatchLeadingOne(std::uint32_t magnitude) { return 31 - __builtin_clz(magnitude); }
  // The same match done the TCAM way: the first entry, in priority order,
  // whose masked bits equal its value; -1 when none matches (zero).
  int MatchLeadingOneByPriority(std::uint32_t magnitude) const;

  std::span<const ToFixedEntry, 256> exponent_table() const { return exponent_table_; }
  std::span<const LeadingOneEntry, 32> leading_one_table() const { return leading_one_table_; }

  static constexpr std::uint32_t kMaxMagnitude = 0x7fffffffu;

 private:
  int scale_bits_;
  std::array<ToFixedEntry, 256> exponent_table_;
  std::array<LeadingOneEntry, 32> leading_one_table_;  // indexed by leading_one
};

struct SaturatingSum {
  std::int32_t value = 0;
  bool saturated = false;
};

// The stateful ALU's saturating add: clamps to [INT32_MIN, INT32_MAX].
inline SaturatingSum SaturatingAdd(std::int32_t a, std::int32_t b) {
  std::int32_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) {
    return {b > 0 ? INT32_MAX : INT32_MIN, true};
  }
  return {sum, false};
}

}  // namespace libra::dataplane
