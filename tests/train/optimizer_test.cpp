#include "train/optimizer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace libra::train {
namespace {

TEST(OptimizerTest, SgdStepsAlongTheMeanGradientWithL2) {
  auto sgd = CreateOptimizer({.kind = OptimizerKind::kSgd, .learning_rate = 0.5f, .l2 = 0.1f});
  float w[2] = {1.0f, -2.0f};
  const float sum[2] = {0.4f, 0.8f};  // two workers' gradients summed
  sgd->Update(w, nullptr, sum, 2, 2);
  EXPECT_FLOAT_EQ(w[0], 1.0f - 0.5f * (0.2f + 0.1f * 1.0f));
  EXPECT_FLOAT_EQ(w[1], -2.0f - 0.5f * (0.4f + 0.1f * -2.0f));
}

TEST(OptimizerTest, AdagradScalesByAccumulatedSquares) {
  auto adagrad = CreateOptimizer(
      {.kind = OptimizerKind::kAdagrad, .learning_rate = 0.1f, .initial_accumulator = 0.0f});
  float w = 0, acc = -1;
  adagrad->InitState(&w, &acc, 1);
  EXPECT_EQ(acc, 0.0f);
  const float g1 = 3.0f, g2 = 4.0f;
  adagrad->Update(&w, &acc, &g1, 1, 1);
  EXPECT_FLOAT_EQ(w, -0.1f);  // lr * g / |g|
  adagrad->Update(&w, &acc, &g2, 1, 1);
  EXPECT_FLOAT_EQ(acc, 25.0f);
  EXPECT_FLOAT_EQ(w, -0.1f - 0.1f * 4.0f / 5.0f);
}

TEST(OptimizerTest, FtrlMatchesTheClosedFormAndL1Zeroes) {
  const OptimizerConfig config{.kind = OptimizerKind::kFtrl,
                               .learning_rate = 0.5f,
                               .l1 = 0.1f,
                               .l2 = 0.2f,
                               .ftrl_beta = 1.0f};
  auto ftrl = CreateOptimizer(config);
  float w = 0, state[2];
  ftrl->InitState(&w, state, 1);
  const float g = 0.6f;
  ftrl->Update(&w, state, &g, 1, 1);
  // z = 0.6, n = 0.36, w = -(0.6 - 0.1) / ((1 + 0.6) / 0.5 + 0.2)
  EXPECT_FLOAT_EQ(w, -0.5f / (3.2f + 0.2f));
  float v = 0, small_state[2];
  ftrl->InitState(&v, small_state, 1);
  const float tiny = 0.05f;  // |z| <= l1: stays exactly zero
  ftrl->Update(&v, small_state, &tiny, 1, 1);
  EXPECT_EQ(v, 0.0f);
}

TEST(OptimizerTest, FtrlStateReproducesANonZeroInitialWeight) {
  auto ftrl = CreateOptimizer(
      {.kind = OptimizerKind::kFtrl, .learning_rate = 0.1f, .l1 = 0.01f, .l2 = 0.1f});
  float w = 0.03f, state[2];
  ftrl->InitState(&w, state, 1);
  const float zero = 0.0f;
  ftrl->Update(&w, state, &zero, 1, 1);
  EXPECT_NEAR(w, 0.03f, 1e-7);
}

// A push that carries the sum of N workers' gradients must give the same
// result as the mean of those gradients pushed by one.
TEST(OptimizerTest, SummedPushEqualsMeanPush) {
  for (auto kind : {OptimizerKind::kSgd, OptimizerKind::kAdagrad, OptimizerKind::kFtrl}) {
    auto opt = CreateOptimizer({.kind = kind, .learning_rate = 0.1f, .l1 = 0.001f, .l2 = 0.01f});
    std::vector<float> a = {0.5f, -0.5f}, b = a;
    std::vector<float> sa(2 * opt->state_per_value()), sb = sa;
    opt->InitState(a.data(), sa.data(), 2);
    opt->InitState(b.data(), sb.data(), 2);
    const std::vector<float> workers[3] = {{0.25f, 1.0f}, {-0.5f, 0.5f}, {1.0f, 0.0f}};
    const std::vector<float> sum = {0.75f, 1.5f}, mean = {0.25f, 0.5f};
    opt->Update(a.data(), sa.data(), sum.data(), 3, 2);
    opt->Update(b.data(), sb.data(), mean.data(), 1, 2);
    EXPECT_FLOAT_EQ(a[0], b[0]) << OptimizerKindName(kind);
    EXPECT_FLOAT_EQ(a[1], b[1]) << OptimizerKindName(kind);
  }
}

TEST(OptimizerTest, RejectsBadConfigAndNames) {
  EXPECT_THROW(CreateOptimizer({.learning_rate = 0}), std::invalid_argument);
  EXPECT_THROW(CreateOptimizer({.l2 = -1}), std::invalid_argument);
  EXPECT_THROW(ParseOptimizerKind("adam"), std::invalid_argument);
  EXPECT_EQ(ParseOptimizerKind("ftrl"), OptimizerKind::kFtrl);
}

}  // namespace
}  // namespace libra::train
