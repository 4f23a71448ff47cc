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
// fixed -> float32 (on the servers: the switch returns its fixed-point sums
// as they are): a 32-entry ternary table matches the leading one of the
// magnitude and selects the exponent field and the shift that aligns the
// mantissa; rounding to nearest, ties away from zero (at most half an ulp).
// Table-driven like the other direction, so a sum converted from the
// switch's RESULT and one summed by a server give the same float bits.
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

// One entry of the exponent table: the action and its constant operands,
// encoded in one 32-bit action-data word so that the lookup is one load and a
// batch of lookups vectorises. All actions share one data path,
//   magnitude = ((((mantissa & mantissa_mask) | hidden_bit) + round_bias)
//                >> right_shift) << left_shift,
// so the entry alone decides: kZero and kReject zero the operands, kSaturate
// makes hidden_bit the largest magnitude. The word's fields:
//
//   bits  0-4   right_shift (0..24); round_bias = 2^(right_shift - 1), or 0
//   bits  5-7   left_shift (0..7)
//   bits 16-17  ConversionStatus
//   bits 24-26  ToFixedAction (for the control plane; the data path ignores it)
//   bit  29     saturate (hidden_bit = INT32_MAX)
//   bit  30     hidden bit 2^23 (normal numbers)
//   bit  31     keep the mantissa (mantissa_mask = 2^23 - 1, else 0)
//
// (The one-bit operands sit at the top so that the compiler keeps the whole
// computation in 32-bit lanes when it vectorises it.)
struct ToFixedEntry {
  std::uint32_t word = 0;

  static constexpr std::uint32_t kSaturate = 1u << 29;
  static constexpr std::uint32_t kHiddenBit = 1u << 30;
  static constexpr std::uint32_t kKeepMantissa = 1u << 31;
  static constexpr int kStatusShift = 16;
  static constexpr int kActionShift = 24;

  ToFixedAction action() const { return static_cast<ToFixedAction>((word >> kActionShift) & 7); }
  ConversionStatus status() const {
    return static_cast<ConversionStatus>((word >> kStatusShift) & 3);
  }
  std::uint32_t right_shift() const { return word & 31; }
  std::uint32_t left_shift() const { return (word >> 5) & 7; }
  std::uint32_t mantissa_mask() const { return AllOnesIf(word) & 0x7fffffu; }
  std::uint32_t hidden_bit() const {
    return ((word >> 7) & 0x800000u) | (AllOnesIf(word << 2) >> 1);
  }
  std::uint32_t round_bias() const { return (1u << right_shift()) >> 1; }

 private:
  // All ones when bit 31 of `bits` is set, else zero.
  static std::uint32_t AllOnesIf(std::uint32_t bits) {
    return static_cast<std::uint32_t>(static_cast<std::int32_t>(bits) >> 31);
  }
};

// The data path of float32 -> fixed: the entry's operands applied to the
// float's bits, then negation selected by the sign bit (as (m ^ s) - s, with
// s all ones or zero). Integer operations only; inlined into the switch's
// per-slot loop, which the compiler vectorises.
inline std::int32_t ApplyToFixed(ToFixedEntry entry, std::uint32_t float_bits) {
  const std::uint32_t magnitude =
      ((((float_bits & entry.mantissa_mask()) | entry.hidden_bit()) + entry.round_bias()) >>
       entry.right_shift())
      << entry.left_shift();
  const std::uint32_t sign = 0u - (float_bits >> 31);
  return static_cast<std::int32_t>((magnitude ^ sign) - sign);
}

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

  // The exponent table's match: the entry for the float's 8 exponent bits.
  ToFixedEntry ExponentEntry(std::uint32_t float_bits) const {
    return {exponent_table_[(float_bits >> 23) & 0xffu]};
  }

  FixedValue ToFixed(std::uint32_t float_bits) const {
    const ToFixedEntry entry = ExponentEntry(float_bits);
    return {ApplyToFixed(entry, float_bits), entry.status()};
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

  // The entries' words, indexed by the 8 exponent bits (ToFixedEntry{word}).
  std::span<const std::uint32_t, 256> exponent_table() const { return exponent_table_; }
  std::span<const LeadingOneEntry, 32> leading_one_table() const { return leading_one_table_; }

  static constexpr std::uint32_t kMaxMagnitude = 0x7fffffffu;

 private:
  int scale_bits_;
  std::array<std::uint32_t, 256> exponent_table_;      // ToFixedEntry words, one load per slot
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
