#include "wire/fixed_point.h"

#include <stdexcept>
#include <string>

namespace libra::dataplane {
namespace {

constexpr int kExponentBias = 127;
constexpr int kMantissaBits = 23;

ToFixedEntry MakeEntry(ToFixedAction action, ConversionStatus status, std::uint32_t operands) {
  return ToFixedEntry{operands |
                      (static_cast<std::uint32_t>(status) << ToFixedEntry::kStatusShift) |
                      (static_cast<std::uint32_t>(action) << ToFixedEntry::kActionShift)};
}

// Entry for biased exponent `exponent`: value = significand * 2^(e - 150),
// fixed = value * 2^F, so the significand moves by e - 150 + F bits.
ToFixedEntry MakeExponentEntry(int exponent, int scale_bits) {
  if (exponent == 0xff) {
    return MakeEntry(ToFixedAction::kReject, ConversionStatus::kRejected, 0);
  }
  // Denormals have no hidden bit and the exponent of the smallest normal.
  const bool denormal = exponent == 0;
  const int shift = (denormal ? 1 : exponent) - kExponentBias - kMantissaBits + scale_bits;
  if (shift >= 8) {  // >= 2^23 << 8 = 2^31
    return MakeEntry(ToFixedAction::kSaturate, ConversionStatus::kSaturated,
                     ToFixedEntry::kSaturate);
  }
  // (2^24 - 1 + 2^(right-1)) >> right is 0 once right >= 25.
  if (shift <= -25) return MakeEntry(ToFixedAction::kZero, ConversionStatus::kOk, 0);
  const std::uint32_t mantissa =
      ToFixedEntry::kKeepMantissa | (denormal ? 0u : ToFixedEntry::kHiddenBit);
  if (shift >= 0) {
    return MakeEntry(ToFixedAction::kShiftLeft, ConversionStatus::kOk,
                     mantissa | (static_cast<std::uint32_t>(shift) << 5));
  }
  return MakeEntry(ToFixedAction::kShiftRight, ConversionStatus::kOk,
                   mantissa | static_cast<std::uint32_t>(-shift));
}

LeadingOneEntry LeadingOne(int leading_one, int scale_bits) {
  LeadingOneEntry entry;
  entry.leading_one = static_cast<std::uint8_t>(leading_one);
  entry.match_value = 1u << leading_one;
  entry.match_mask = 0xffffffffu << leading_one;
  if (leading_one > kMantissaBits) {
    entry.right_shift = static_cast<std::uint8_t>(leading_one - kMantissaBits);
    entry.round_bias = 1u << (entry.right_shift - 1);
  } else {
    entry.left_shift = static_cast<std::uint8_t>(kMantissaBits - leading_one);
  }
  // value = magnitude * 2^-F, so the unbiased exponent is leading_one - F.
  const int biased = leading_one - scale_bits + kExponentBias;
  entry.exponent_base = static_cast<std::uint32_t>(biased - 1) << kMantissaBits;
  return entry;
}

}  // namespace

FixedPointCodec::FixedPointCodec(int scale_bits) : scale_bits_(scale_bits) {
  if (scale_bits < kMinScaleBits || scale_bits > kMaxScaleBits) {
    throw std::invalid_argument("scale bits F must be in [" + std::to_string(kMinScaleBits) + ", " +
                                std::to_string(kMaxScaleBits) + "], got " +
                                std::to_string(scale_bits));
  }
  for (int e = 0; e < 256; ++e) exponent_table_[e] = MakeExponentEntry(e, scale_bits).word;
  for (int p = 0; p < 32; ++p) leading_one_table_[p] = LeadingOne(p, scale_bits);
}

int FixedPointCodec::MatchLeadingOneByPriority(std::uint32_t magnitude) const {
  for (int p = 31; p >= 0; --p) {
    const LeadingOneEntry& entry = leading_one_table_[p];
    if ((magnitude & entry.match_mask) == entry.match_value) return p;
  }
  return -1;
}

}  // namespace libra::dataplane
