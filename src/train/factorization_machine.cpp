#include "train/factorization_machine.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace libra::train {

FactorizationMachine::FactorizationMachine(const ModelConfig& config)
    : Model(config.seed), dim_(config.embedding_dim) {
  if (dim_ == 0) throw std::invalid_argument("embedding dimension must be at least 1");
}

float FactorizationMachine::InitialFeatureValue(ParameterKey key, uint32_t j) const {
  // Zero embeddings would have zero gradients forever; small random ones
  // break the symmetry without swamping the linear part.
  return j == 0 ? 0.0f : HashUniform(key, j, 0.1f / std::sqrt(static_cast<float>(dim_)));
}

void FactorizationMachine::FmForward(const Batch& batch, const float* params,
                                     std::vector<float>* logits,
                                     std::vector<float>* embedding_sums) const {
  const uint32_t length = value_length();
  logits->assign(batch.rows(), 0.0f);
  embedding_sums->assign(batch.rows() * dim_, 0.0f);
  std::vector<float> squares(dim_);
  for (size_t r = 0; r < batch.rows(); ++r) {
    float* sums = embedding_sums->data() + r * dim_;
    std::fill(squares.begin(), squares.end(), 0.0f);
    float linear = 0;
    for (uint32_t i = batch.row_begin[r]; i < batch.row_begin[r + 1]; ++i) {
      const float* p = params + static_cast<size_t>(batch.slots[i]) * length;
      const float x = batch.values[i];
      linear += p[0] * x;
      for (uint32_t k = 0; k < dim_; ++k) {
        const float t = p[1 + k] * x;
        sums[k] += t;
        squares[k] += t * t;
      }
    }
    float pairwise = 0;
    for (uint32_t k = 0; k < dim_; ++k) pairwise += sums[k] * sums[k] - squares[k];
    (*logits)[r] = linear + 0.5f * pairwise;
  }
}

void FactorizationMachine::FmBackward(const Batch& batch, const float* params,
                                      const std::vector<float>& dlogits,
                                      const std::vector<float>& embedding_sums,
                                      float* gradients) const {
  const uint32_t length = value_length();
  for (size_t r = 0; r < batch.rows(); ++r) {
    const float* sums = embedding_sums.data() + r * dim_;
    const float d = dlogits[r];
    for (uint32_t i = batch.row_begin[r]; i < batch.row_begin[r + 1]; ++i) {
      const size_t offset = static_cast<size_t>(batch.slots[i]) * length;
      const float* p = params + offset;
      float* g = gradients + offset;
      const float x = batch.values[i];
      g[0] += d * x;
      for (uint32_t k = 0; k < dim_; ++k) g[1 + k] += d * x * (sums[k] - p[1 + k] * x);
    }
  }
}

double FactorizationMachine::ApplyLoss(const Batch& batch, const std::vector<float>& logits,
                                       float* predictions, std::vector<float>* dlogits) {
  const float inverse_rows = 1.0f / static_cast<float>(std::max<size_t>(1, batch.rows()));
  dlogits->resize(batch.rows());
  double loss = 0;
  for (size_t r = 0; r < batch.rows(); ++r) {
    predictions[r] = 1.0f / (1.0f + std::exp(-logits[r]));
    loss += LogLossOfLogit(logits[r], batch.labels[r]);
    (*dlogits)[r] = (predictions[r] - batch.labels[r]) * inverse_rows;
  }
  return loss;
}

double FactorizationMachine::Evaluate(const Batch& batch, const float* params, float* predictions,
                                      float* gradients) const {
  std::vector<float> logits, sums, dlogits;
  FmForward(batch, params, &logits, &sums);
  const float bias = params[static_cast<size_t>(batch.dense_slots[0]) * value_length()];
  for (float& z : logits) z += bias;
  const double loss = ApplyLoss(batch, logits, predictions, &dlogits);
  if (gradients != nullptr) {
    std::fill_n(gradients, batch.keys.size() * value_length(), 0.0f);
    FmBackward(batch, params, dlogits, sums, gradients);
    float dbias = 0;
    for (float d : dlogits) dbias += d;
    gradients[static_cast<size_t>(batch.dense_slots[0]) * value_length()] += dbias;
  }
  return loss;
}

}  // namespace libra::train
