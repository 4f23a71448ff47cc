// Per-key optimizers as a parameter server applies them. Each key carries
// its values and an optimizer state of its own; an update takes the SUM of
// the gradients of `contributors` workers (a plain push carries 1, a push
// the switch aggregated or a BSP merge carries N) and steps with their mean,
// so the result does not depend on how the sum was formed.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace libra::train {

enum class OptimizerKind { kSgd, kAdagrad, kFtrl };

struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::kAdagrad;
  float learning_rate = 0.05f;  // FTRL's alpha
  float l1 = 0.0f;              // FTRL only
  float l2 = 0.0f;              // all: adds l2 * w to the gradient of a key it updates
  float ftrl_beta = 1.0f;
  float initial_accumulator = 1e-6f;  // Adagrad
};

// Throws std::invalid_argument for anything but "sgd", "adagrad", "ftrl".
OptimizerKind ParseOptimizerKind(const std::string& name);
std::string OptimizerKindName(OptimizerKind kind);

class Optimizer {
 public:
  explicit Optimizer(const OptimizerConfig& config) : config_(config) {}
  virtual ~Optimizer() = default;

  // Floats of state per value.
  virtual uint32_t state_per_value() const = 0;
  // State for freshly initialised weights (`length` values).
  virtual void InitState(const float* weights, float* state, uint32_t length) const = 0;
  // One step on `length` values from the sum of `contributors` gradients.
  virtual void Update(float* weights, float* state, const float* gradient_sum,
                      uint32_t contributors, uint32_t length) const = 0;

  const OptimizerConfig& config() const { return config_; }

 protected:
  OptimizerConfig config_;
};

std::unique_ptr<Optimizer> CreateOptimizer(const OptimizerConfig& config);

}  // namespace libra::train
