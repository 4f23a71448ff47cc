// ExactSum: the 64-bit sum a server computes for hot values whose switch sum
// saturated.
#include "hotpath/server/exact_sum.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace libra::hotpath {
namespace {

TEST(ExactSum, SumsWhatAThirtyTwoBitSumCannotHold) {
  ExactSum sum(28);  // 32 bits hold |x| < 8 at this scale
  for (int w = 0; w < 10; ++w) sum.Add(60.0f);
  EXPECT_EQ(sum.Value(), 600.0f);
  EXPECT_FALSE(sum.wide());
}

TEST(ExactSum, IsWithinHalfAStepPerValueAndIndependentOfOrder) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> value(-100.0f, 100.0f);
  std::vector<float> values(50);
  for (float& v : values) v = value(rng);
  double exact = 0;
  for (const float v : values) exact += v;
  ExactSum first(20);
  for (const float v : values) first.Add(v);
  EXPECT_NEAR(first.Value(), exact, 50 * std::ldexp(1.0, -21) + std::fabs(exact) * 1e-7);
  for (int trial = 0; trial < 5; ++trial) {
    std::shuffle(values.begin(), values.end(), rng);
    ExactSum again(20);
    for (const float v : values) again.Add(v);
    EXPECT_EQ(again.Value(), first.Value());
  }
}

// As float addition in any order: the plain parameter server's sum of the
// same values.
TEST(ExactSum, CarriesInfinitiesAndNanAsAFloatSumDoes) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<std::vector<float>> cases = {
      {1.5f, kInf, 2.0f}, {-kInf, 1.5f}, {1.5f, kNan, 2.0f}, {kInf, 1.5f, -kInf}, {kInf, kInf}};
  for (std::vector<float> values : cases) {
    float reference = 0;
    for (const float v : values) reference += v;
    for (int order = 0; order < 2; ++order) {
      ExactSum sum(16);
      for (const float v : values) sum.Add(v);
      if (std::isnan(reference)) {
        EXPECT_TRUE(std::isnan(sum.Value())) << values.size() << " values";
      } else {
        EXPECT_EQ(sum.Value(), reference) << values.size() << " values";
      }
      EXPECT_FALSE(sum.wide());
      std::reverse(values.begin(), values.end());
    }
  }
}

// Beyond 64 bits at the scale the sum is the float sum, in double precision:
// a large value comes out as the plain parameter server sums it, not clamped.
TEST(ExactSum, SumsInDoublePrecisionBeyondSixtyFourBits) {
  ExactSum sum(26);
  sum.Add(1.5f);
  EXPECT_EQ(sum.Value(), 1.5f);
  EXPECT_FALSE(sum.wide());
  sum.Add(1e30f);  // 1e30 * 2^26 is far beyond 2^62
  sum.Add(-3e12f);
  EXPECT_TRUE(sum.wide());
  EXPECT_EQ(sum.Value(), static_cast<float>(1.5 + double{1e30f} - 3e12));
  ExactSum overflowing(30);  // each value fits, their sum does not
  for (int i = 0; i < 5; ++i) overflowing.Add(2e9f);
  EXPECT_TRUE(overflowing.wide());
  EXPECT_EQ(overflowing.Value(), 1e10f);
  EXPECT_THROW(ExactSum(31), std::invalid_argument);
  EXPECT_THROW(ExactSum(-1), std::invalid_argument);
}

}  // namespace
}  // namespace libra::hotpath
