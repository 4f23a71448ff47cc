#include "wire/fixed_point.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>

namespace libra::dataplane {
namespace {

std::uint32_t Bits(float x) { return std::bit_cast<std::uint32_t>(x); }
float Float(std::uint32_t bits) { return std::bit_cast<float>(bits); }

double Ulp(float x) {
  const float a = std::fabs(x);
  return static_cast<double>(std::nextafter(a, std::numeric_limits<float>::infinity()) - a);
}

class FixedPointTest : public ::testing::TestWithParam<int> {};

// Random bit patterns cover every exponent, denormals and both signs.
TEST_P(FixedPointTest, OneValueIsWithinHalfAStepOnMillionsOfValues) {
  const int f = GetParam();
  const FixedPointCodec codec(f);
  const double step = std::ldexp(1.0, -f);
  const double limit = std::ldexp(1.0, 31 - f);
  std::mt19937_64 rng(1234 + f);
  for (int i = 0; i < 1'000'000; ++i) {
    const auto bits = static_cast<std::uint32_t>(rng());
    const float x = Float(bits);
    const FixedValue fixed = codec.ToFixed(bits);
    if (!std::isfinite(x)) {
      ASSERT_EQ(fixed.status, ConversionStatus::kRejected) << x;
      continue;
    }
    if (std::fabs(static_cast<double>(x)) >= limit) {
      ASSERT_EQ(fixed.status, ConversionStatus::kSaturated) << x;
      ASSERT_EQ(fixed.value, x > 0 ? INT32_MAX : -INT32_MAX);
      continue;
    }
    ASSERT_EQ(fixed.status, ConversionStatus::kOk) << x;
    const double error = std::fabs(fixed.value * step - static_cast<double>(x));
    ASSERT_LE(error, step / 2) << "x=" << x << " F=" << f;
    // Nearest, ties away from zero.
    ASSERT_EQ(fixed.value, static_cast<std::int32_t>(std::round(std::ldexp(double{x}, f))));
  }
}

TEST_P(FixedPointTest, BackToFloatIsCorrectlyRoundedOnMillionsOfValues) {
  const int f = GetParam();
  const FixedPointCodec codec(f);
  std::mt19937_64 rng(99 + f);
  for (int i = 0; i < 1'000'000; ++i) {
    // Spread over every magnitude, not just large ones.
    const int bits = 1 + static_cast<int>(rng() % 31);  // magnitudes below 2^bits
    auto value = static_cast<std::int32_t>(rng() >> (33 + (31 - bits)));
    if (rng() & 1) value = -value;
    const float y = Float(codec.ToFloatBits(value));
    const double exact = std::ldexp(static_cast<double>(value), -f);
    const auto nearest = static_cast<float>(exact);
    if (y != nearest) {
      // Only a tie may differ from IEEE (ties to even); ours goes away from zero.
      ASSERT_EQ(std::fabs(double{y} - exact), std::fabs(double{nearest} - exact)) << value;
      ASSERT_GT(std::fabs(double{y}), std::fabs(exact));
    }
    ASSERT_LE(std::fabs(double{y} - exact), Ulp(y) / 2) << value;
  }
}

TEST_P(FixedPointTest, SumOfNValuesIsWithinNStepsPlusOneRounding) {
  const int f = GetParam();
  const FixedPointCodec codec(f);
  std::mt19937_64 rng(7 + f);
  const double range = std::ldexp(1.0, 31 - f) / 64;  // 16 workers cannot overflow
  std::uniform_real_distribution<float> values(static_cast<float>(-range),
                                               static_cast<float>(range));
  for (int trial = 0; trial < 20'000; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 16);
    double exact = 0;
    std::int32_t sum = 0;
    for (int w = 0; w < n; ++w) {
      const float x = values(rng) * std::ldexp(1.0f, -static_cast<int>(rng() % 20));
      exact += x;
      const SaturatingSum s = SaturatingAdd(sum, codec.ToFixed(Bits(x)).value);
      ASSERT_FALSE(s.saturated);
      sum = s.value;
    }
    const float result = Float(codec.ToFloatBits(sum));
    ASSERT_LE(std::fabs(double{result} - exact), n * std::ldexp(1.0, -f) + Ulp(result) / 2)
        << "n=" << n;
  }
}

TEST_P(FixedPointTest, TernaryMatchEqualsLeadingOneInstruction) {
  const FixedPointCodec codec(GetParam());
  EXPECT_EQ(codec.MatchLeadingOneByPriority(0), -1);
  std::mt19937_64 rng(5);
  for (int i = 0; i < 100'000; ++i) {
    const auto magnitude = static_cast<std::uint32_t>(rng() >> (rng() % 64)) | 1u;
    ASSERT_EQ(codec.MatchLeadingOneByPriority(magnitude),
              FixedPointCodec::MatchLeadingOne(magnitude));
  }
  for (int p = 0; p < 32; ++p) {
    ASSERT_EQ(codec.MatchLeadingOneByPriority(1u << p), p);
  }
}

INSTANTIATE_TEST_SUITE_P(Scales, FixedPointTest, ::testing::Values(0, 8, 16, 24, 30));

TEST(FixedPointEdgeTest, ZerosDenormalsInfinitiesAndNan) {
  const FixedPointCodec codec(16);
  EXPECT_EQ(codec.ToFixed(Bits(0.0f)).value, 0);
  EXPECT_EQ(codec.ToFixed(Bits(-0.0f)).value, 0);
  EXPECT_EQ(codec.ToFixed(Bits(-0.0f)).status, ConversionStatus::kOk);
  EXPECT_EQ(codec.ToFixed(Bits(std::numeric_limits<float>::denorm_min())).value, 0);
  EXPECT_EQ(codec.ToFixed(Bits(-std::numeric_limits<float>::denorm_min())).value, 0);
  EXPECT_EQ(codec.ToFixed(Bits(std::numeric_limits<float>::min())).value, 0);
  EXPECT_EQ(codec.ToFixed(Bits(std::numeric_limits<float>::infinity())).status,
            ConversionStatus::kRejected);
  EXPECT_EQ(codec.ToFixed(Bits(-std::numeric_limits<float>::infinity())).status,
            ConversionStatus::kRejected);
  EXPECT_EQ(codec.ToFixed(Bits(std::numeric_limits<float>::quiet_NaN())).status,
            ConversionStatus::kRejected);
  EXPECT_EQ(codec.ToFixed(0x7f800001u).status, ConversionStatus::kRejected);  // signalling NaN
  EXPECT_EQ(codec.ToFloatBits(0), Bits(0.0f));
}

TEST(FixedPointEdgeTest, RoundingAndSaturationBoundaries) {
  const FixedPointCodec codec(16);
  const float half_step = std::ldexp(1.0f, -17);
  EXPECT_EQ(codec.ToFixed(Bits(half_step)).value, 1);  // tie rounds away from zero
  EXPECT_EQ(codec.ToFixed(Bits(-half_step)).value, -1);
  EXPECT_EQ(codec.ToFixed(Bits(std::nextafter(half_step, 0.0f))).value, 0);
  EXPECT_EQ(codec.ToFixed(Bits(1.0f)).value, 1 << 16);
  EXPECT_EQ(codec.ToFixed(Bits(-2.5f)).value, -(5 << 15));

  const float limit = std::ldexp(1.0f, 15);  // 2^(31 - F)
  const FixedValue below = codec.ToFixed(Bits(std::nextafter(limit, 0.0f)));
  EXPECT_EQ(below.status, ConversionStatus::kOk);
  EXPECT_EQ(below.value, INT32_MAX - 127);
  EXPECT_EQ(codec.ToFixed(Bits(limit)).status, ConversionStatus::kSaturated);
  EXPECT_EQ(codec.ToFixed(Bits(-limit)).value, -INT32_MAX);
  EXPECT_EQ(codec.ToFixed(Bits(std::numeric_limits<float>::max())).status,
            ConversionStatus::kSaturated);

  EXPECT_EQ(Float(codec.ToFloatBits(INT32_MIN)), -limit);
  EXPECT_EQ(Float(codec.ToFloatBits(INT32_MAX)), limit);  // rounds up into the next binade
  EXPECT_EQ(Float(codec.ToFloatBits(1)), std::ldexp(1.0f, -16));
  EXPECT_EQ(Float(codec.ToFloatBits(-3 << 16)), -3.0f);
}

TEST(FixedPointEdgeTest, ScaleOutOfRangeIsRefused) {
  EXPECT_THROW(FixedPointCodec(-1), std::invalid_argument);
  EXPECT_THROW(FixedPointCodec(31), std::invalid_argument);
}

TEST(FixedPointEdgeTest, ExponentTableHasOneEntryPerExponent) {
  const FixedPointCodec codec(16);
  EXPECT_EQ(codec.exponent_table().size(), 256u);
  EXPECT_EQ(ToFixedEntry{codec.exponent_table()[255]}.action(), ToFixedAction::kReject);
  EXPECT_EQ(ToFixedEntry{codec.exponent_table()[127]}.action(),
            ToFixedAction::kShiftRight);  // 1.x * 2^16
  EXPECT_EQ(codec.leading_one_table().size(), 32u);
}

}  // namespace
}  // namespace libra::dataplane
