// Logistic regression: one weight per feature key plus a bias.
#pragma once

#include "train/model.h"

namespace libra::train {

class LogisticRegression : public Model {
 public:
  explicit LogisticRegression(const ModelConfig& config) : Model(config.seed) {}
  uint32_t value_length() const override { return 1; }
  size_t num_dense_parameters() const override { return 1; }
  double Evaluate(const Batch& batch, const float* params, float* predictions,
                  float* gradients) const override;

 protected:
  float InitialFeatureValue(ParameterKey, uint32_t) const override { return 0.0f; }
  float InitialDenseValue(size_t) const override { return 0.0f; }
};

}  // namespace libra::train
