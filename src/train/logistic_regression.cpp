#include "train/logistic_regression.h"

#include <algorithm>
#include <cmath>

namespace libra::train {

double LogisticRegression::Evaluate(const Batch& batch, const float* params, float* predictions,
                                    float* gradients) const {
  const uint32_t bias_slot = batch.dense_slots[0];
  const float bias = params[bias_slot];
  const float inverse_rows = 1.0f / static_cast<float>(std::max<size_t>(1, batch.rows()));
  if (gradients != nullptr) std::fill_n(gradients, batch.keys.size(), 0.0f);
  double loss = 0;
  for (size_t r = 0; r < batch.rows(); ++r) {
    float logit = bias;
    for (uint32_t i = batch.row_begin[r]; i < batch.row_begin[r + 1]; ++i) {
      logit += params[batch.slots[i]] * batch.values[i];
    }
    predictions[r] = 1.0f / (1.0f + std::exp(-logit));
    loss += LogLossOfLogit(logit, batch.labels[r]);
    if (gradients == nullptr) continue;
    const float dlogit = (predictions[r] - batch.labels[r]) * inverse_rows;
    gradients[bias_slot] += dlogit;
    for (uint32_t i = batch.row_begin[r]; i < batch.row_begin[r + 1]; ++i) {
      gradients[batch.slots[i]] += dlogit * batch.values[i];
    }
  }
  return loss;
}

}  // namespace libra::train
