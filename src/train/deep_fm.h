// DeepFM-style model: the factorization machine plus a small ReLU MLP over
// the concatenated per-field embeddings (sum of v_i x_i over the features of
// each field), whose output is added to the FM logit. The MLP's weights are
// dense parameters, stored on the servers under dense keys like the bias.
#pragma once

#include <vector>

#include "train/factorization_machine.h"

namespace libra::train {

class DeepFm : public FactorizationMachine {
 public:
  explicit DeepFm(const ModelConfig& config);
  size_t num_dense_parameters() const override { return dense_size_; }
  double Evaluate(const Batch& batch, const float* params, float* predictions,
                  float* gradients) const override;

 protected:
  float InitialDenseValue(size_t j) const override;

 private:
  // Dense layout: [bias][layer 0: W (out x in, row-major), b (out)][layer 1] ...
  struct Layer {
    uint32_t in, out;
    size_t weights, biases;  // offsets into the dense parameters
  };
  uint32_t num_fields_;
  std::vector<Layer> layers_;  // hidden layers, then the 1-unit output layer
  size_t dense_size_;
};

}  // namespace libra::train
