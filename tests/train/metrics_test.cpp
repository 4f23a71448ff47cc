#include "train/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

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

// A diverged model predicts NaN or infinities. Before this was handled, Auc
// spun forever on a NaN (a tie run that never advanced) and sorted with a
// comparison that is no strict weak order (undefined behaviour).
TEST(MetricsTest, NonFinitePredictionsGiveNumbersAndEnd) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  // NaN ranks lowest: the positive at 0.9 beats both negatives; the NaN
  // positive ties the NaN negative (1/2) and loses to the 0.2 one: 2.5 / 4.
  EXPECT_DOUBLE_EQ(Auc({1, 0, 1, 0}, {0.9f, nan, nan, 0.2f}), 0.625);
  EXPECT_DOUBLE_EQ(Auc({0, 1}, {-inf, inf}), 1.0);
  EXPECT_DOUBLE_EQ(Auc({0, 1, 0, 1}, {nan, nan, nan, nan}), 0.5);
  // Many NaNs among numbers: a run of ties through the middle of a sort.
  std::vector<float> labels, predictions;
  for (int i = 0; i < 1000; ++i) {
    labels.push_back(static_cast<float>(i % 2));
    predictions.push_back(i % 3 == 0 ? nan : static_cast<float>(i % 7) / 7);
  }
  const double auc = Auc(labels, predictions);
  EXPECT_TRUE(auc >= 0.0 && auc <= 1.0) << auc;
  // The loss of a NaN prediction is the clipped worst case, not NaN.
  EXPECT_NEAR(LogLoss({1, 0}, {nan, nan}), -std::log(1e-7), 1e-6);
  EXPECT_TRUE(std::isfinite(LogLoss({1, 0}, {inf, -inf})));
}

}  // namespace
}  // namespace libra::train
