#include "cluster/speedup_bound.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace libra::cluster {
namespace {

TEST(SpeedupBoundTest, NothingHotGivesNothing) {
  EXPECT_DOUBLE_EQ(PredictSpeedup(8, 1, 0.0).speedup, 1.0);
}

TEST(SpeedupBoundTest, EverythingHotLeavesOneUnitPerServer) {
  const SpeedupBound b = PredictSpeedup(8, 1, 1.0);
  EXPECT_DOUBLE_EQ(b.plain_link_units, 8.0);
  EXPECT_DOUBLE_EQ(b.libra_link_units, 1.0);
  EXPECT_DOUBLE_EQ(b.speedup, 8.0);
}

TEST(SpeedupBoundTest, HalfHotWithEightWorkers) {
  // (1 - 0.5) * 8 + 0.5 = 4.5 units on the server's link instead of 8.
  EXPECT_NEAR(PredictSpeedup(8, 1, 0.5).speedup, 8.0 / 4.5, 1e-12);
}

TEST(SpeedupBoundTest, TheWorkersLinkLimitsWhenServersAreMany) {
  // N = M: each link already carries one unit; Libra cannot go below it.
  EXPECT_DOUBLE_EQ(PredictSpeedup(2, 2, 0.9).speedup, 1.0);
  // N = 4, M = 2, h = 0.5: plain 2 units, Libra max(2.5 / 2, 1) = 1.25.
  EXPECT_NEAR(PredictSpeedup(4, 2, 0.5).speedup, 2.0 / 1.25, 1e-12);
}

TEST(SpeedupBoundTest, OverlapBetweenOneAndN) {
  // U = 1 is the bound; U = N (no two workers share a hot key) gains nothing.
  EXPECT_DOUBLE_EQ(PredictSpeedup(8, 1, 0.5, 1).speedup, PredictSpeedup(8, 1, 0.5).speedup);
  EXPECT_DOUBLE_EQ(PredictSpeedup(8, 1, 0.5, 8).speedup, 1.0);
  // h = 0.5, U = 3: (4 + 1.5) = 5.5 units instead of 8.
  EXPECT_NEAR(PredictSpeedup(8, 1, 0.5, 3).speedup, 8.0 / 5.5, 1e-12);
}

TEST(SpeedupBoundTest, RejectsBadInput) {
  EXPECT_THROW(PredictSpeedup(0, 1, 0.5), std::invalid_argument);
  EXPECT_THROW(PredictSpeedup(2, 0, 0.5), std::invalid_argument);
  EXPECT_THROW(PredictSpeedup(2, 1, 1.5), std::invalid_argument);
  EXPECT_THROW(PredictSpeedup(2, 1, -0.1), std::invalid_argument);
  EXPECT_THROW(PredictSpeedup(2, 1, 0.5, 0.5), std::invalid_argument);
  EXPECT_THROW(PredictSpeedup(2, 1, 0.5, 3), std::invalid_argument);
}

}  // namespace
}  // namespace libra::cluster
