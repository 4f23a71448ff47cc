#include "train/optimizer.h"

#include <cmath>
#include <stdexcept>

namespace libra::train {
namespace {

class Sgd : public Optimizer {
 public:
  using Optimizer::Optimizer;
  uint32_t state_per_value() const override { return 0; }
  void InitState(const float*, float*, uint32_t) const override {}
  void Update(float* w, float*, const float* g_sum, uint32_t n, uint32_t length) const override {
    const float scale = 1.0f / static_cast<float>(n);
    for (uint32_t j = 0; j < length; ++j) {
      w[j] -= config_.learning_rate * (g_sum[j] * scale + config_.l2 * w[j]);
    }
  }
};

class Adagrad : public Optimizer {
 public:
  using Optimizer::Optimizer;
  uint32_t state_per_value() const override { return 1; }
  void InitState(const float*, float* accumulator, uint32_t length) const override {
    for (uint32_t j = 0; j < length; ++j) accumulator[j] = config_.initial_accumulator;
  }
  void Update(float* w, float* accumulator, const float* g_sum, uint32_t n,
              uint32_t length) const override {
    const float scale = 1.0f / static_cast<float>(n);
    for (uint32_t j = 0; j < length; ++j) {
      const float g = g_sum[j] * scale + config_.l2 * w[j];
      accumulator[j] += g * g;
      w[j] -= config_.learning_rate * g / std::sqrt(accumulator[j]);
    }
  }
};

// FTRL-proximal (McMahan et al. 2013), per coordinate. State: z and n.
class Ftrl : public Optimizer {
 public:
  using Optimizer::Optimizer;
  uint32_t state_per_value() const override { return 2; }
  void InitState(const float* w, float* state, uint32_t length) const override {
    // Choose z so that the closed form below gives back the initial weight
    // (random FM embeddings must survive the first step).
    for (uint32_t j = 0; j < length; ++j) {
      float* z = &state[2 * j];
      z[1] = 0.0f;  // n
      const float denominator = config_.ftrl_beta / config_.learning_rate + config_.l2;
      z[0] = w[j] == 0.0f ? 0.0f : -w[j] * denominator - std::copysign(config_.l1, w[j]);
    }
  }
  void Update(float* w, float* state, const float* g_sum, uint32_t n_contributors,
              uint32_t length) const override {
    const float scale = 1.0f / static_cast<float>(n_contributors);
    const float alpha = config_.learning_rate;
    for (uint32_t j = 0; j < length; ++j) {
      float& z = state[2 * j];
      float& n = state[2 * j + 1];
      const float g = g_sum[j] * scale;
      const float sigma = (std::sqrt(n + g * g) - std::sqrt(n)) / alpha;
      z += g - sigma * w[j];
      n += g * g;
      if (std::fabs(z) <= config_.l1) {
        w[j] = 0.0f;
      } else {
        w[j] = -(z - std::copysign(config_.l1, z)) /
               ((config_.ftrl_beta + std::sqrt(n)) / alpha + config_.l2);
      }
    }
  }
};

}  // namespace

OptimizerKind ParseOptimizerKind(const std::string& name) {
  if (name == "sgd") return OptimizerKind::kSgd;
  if (name == "adagrad") return OptimizerKind::kAdagrad;
  if (name == "ftrl") return OptimizerKind::kFtrl;
  throw std::invalid_argument("unknown optimizer '" + name + "' (sgd, adagrad, ftrl)");
}

std::string OptimizerKindName(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::kSgd:
      return "sgd";
    case OptimizerKind::kAdagrad:
      return "adagrad";
    case OptimizerKind::kFtrl:
      return "ftrl";
  }
  return "?";
}

std::unique_ptr<Optimizer> CreateOptimizer(const OptimizerConfig& config) {
  if (!(config.learning_rate > 0)) throw std::invalid_argument("learning rate must be positive");
  if (config.l1 < 0 || config.l2 < 0) throw std::invalid_argument("l1 and l2 must be >= 0");
  switch (config.kind) {
    case OptimizerKind::kSgd:
      return std::make_unique<Sgd>(config);
    case OptimizerKind::kAdagrad:
      return std::make_unique<Adagrad>(config);
    case OptimizerKind::kFtrl:
      return std::make_unique<Ftrl>(config);
  }
  throw std::invalid_argument("unknown optimizer kind");
}

}  // namespace libra::train
