// Factorization machine: per feature key a weight w and a d-dimensional
// embedding v (value length d + 1), logit = b + sum_i w_i x_i
// + sum_{i<j} <v_i, v_j> x_i x_j, computed in O(nnz d) with the
// square-of-sums identity.
#pragma once

#include <vector>

#include "train/model.h"

namespace libra::train {

class FactorizationMachine : public Model {
 public:
  explicit FactorizationMachine(const ModelConfig& config);
  uint32_t value_length() const override { return 1 + dim_; }
  size_t num_dense_parameters() const override { return 1; }
  double Evaluate(const Batch& batch, const float* params, float* predictions,
                  float* gradients) const override;

 protected:
  float InitialFeatureValue(ParameterKey key, uint32_t j) const override;
  float InitialDenseValue(size_t) const override { return 0.0f; }

  // Per row, the FM logit without the bias, and sum_i v_i x_i (rows x dim).
  void FmForward(const Batch& batch, const float* params, std::vector<float>* logits,
                 std::vector<float>* embedding_sums) const;
  // Adds d(loss)/d(w, v) for the per-row d(loss)/d(logit) to `gradients`.
  void FmBackward(const Batch& batch, const float* params, const std::vector<float>& dlogits,
                  const std::vector<float>& embedding_sums, float* gradients) const;
  // Predictions, summed loss and d(mean loss)/d(logit) per row.
  static double ApplyLoss(const Batch& batch, const std::vector<float>& logits, float* predictions,
                          std::vector<float>* dlogits);

  uint32_t dim_;
};

}  // namespace libra::train
