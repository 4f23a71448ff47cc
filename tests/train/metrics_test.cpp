#include "train/metrics.h"

#include <gtest/gtest.h>

#include <cmath>

namespace libra::train {
namespace {

TEST(MetricsTest, LogLossMatchesHandComputation) {
  EXPECT_NEAR(LogLoss({1, 0}, {0.8f, 0.4f}), -(std::log(0.8) + std::log(0.6)) / 2, 1e-6);
  EXPECT_NEAR(LogLoss({1, 0, 1, 0}, {0.5f, 0.5f, 0.5f, 0.5f}), std::log(2.0), 1e-6);
  // Clipped, not infinite.
  EXPECT_LT(LogLoss({1}, {0.0f}), 17.0);
  EXPECT_THROW(LogLoss({1}, {}), std::invalid_argument);
}

TEST(MetricsTest, AucCountsOrderedPairsWithTiesAsHalf) {
  EXPECT_DOUBLE_EQ(Auc({0, 0, 1, 1}, {0.1f, 0.2f, 0.3f, 0.4f}), 1.0);
  EXPECT_DOUBLE_EQ(Auc({1, 1, 0, 0}, {0.1f, 0.2f, 0.3f, 0.4f}), 0.0);
  // Pairs (pos, neg): (0.35,0.1)>, (0.35,0.4)<, (0.8,0.1)>, (0.8,0.4)> -> 3/4.
  EXPECT_DOUBLE_EQ(Auc({0, 1, 0, 1}, {0.1f, 0.35f, 0.4f, 0.8f}), 0.75);
  EXPECT_DOUBLE_EQ(Auc({0, 1, 0, 1}, {0.5f, 0.5f, 0.5f, 0.5f}), 0.5);
  // One tie between a positive and a negative counts 1/2: (1 + 0.5) / 2.
  EXPECT_DOUBLE_EQ(Auc({0, 1, 0, 1}, {0.1f, 0.3f, 0.3f, 0.2f}), 0.625);
  EXPECT_DOUBLE_EQ(Auc({1, 1}, {0.1f, 0.2f}), 0.5);
}

}  // namespace
}  // namespace libra::train
