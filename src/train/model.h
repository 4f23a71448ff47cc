// The sparse CTR models a worker trains. A model owns no parameters: it
// computes predictions and gradients for a batch from the parameter values
// the worker pulled, laid out as value_length() floats per batch key, so the
// same code serves a worker on the parameter server and a single-process
// trainer.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "train/batch.h"

namespace libra::train {

enum class ModelKind { kLogisticRegression, kFactorizationMachine, kDeepFm };

struct ModelConfig {
  ModelKind kind = ModelKind::kLogisticRegression;
  uint32_t embedding_dim = 8;                  // FM and DeepFM
  std::vector<uint32_t> hidden_units{32, 16};  // DeepFM's MLP
  uint32_t num_fields = 1;                     // DeepFM's MLP input is num_fields embeddings
  uint64_t seed = 1;                           // initial values
};

// Throws std::invalid_argument for anything but "lr", "fm", "deepfm".
ModelKind ParseModelKind(const std::string& name);
std::string ModelKindName(ModelKind kind);

class Model {
 public:
  virtual ~Model() = default;

  // Floats per parameter key.
  virtual uint32_t value_length() const = 0;
  // Dense parameters (bias, MLP), packed value_length() per dense key.
  uint32_t num_dense_keys() const {
    return static_cast<uint32_t>((num_dense_parameters() + value_length() - 1) / value_length());
  }
  virtual size_t num_dense_parameters() const = 0;

  // The initial value_length() floats of `key`: a deterministic function of
  // the key, so servers can create parameters on first touch.
  void InitialValue(ParameterKey key, float* value) const;

  // Writes p(y = 1) of each row of `batch` to `predictions`. If `gradients`
  // is not null, also writes there the gradient of the batch's mean log loss
  // (same layout as `params`). Returns the batch's summed log loss.
  virtual double Evaluate(const Batch& batch, const float* params, float* predictions,
                          float* gradients) const = 0;

 protected:
  explicit Model(uint64_t seed) : seed_(seed) {}
  virtual float InitialFeatureValue(ParameterKey key, uint32_t j) const = 0;
  virtual float InitialDenseValue(size_t j) const = 0;
  // Uniform in [-scale, scale], a function of (seed, a, b) only.
  float HashUniform(uint64_t a, uint64_t b, float scale) const;

  // Dense parameters gathered from / scattered to their keys' slots.
  void GatherDense(const Batch& batch, const float* params, std::vector<float>* dense) const;
  void ScatterDense(const Batch& batch, const std::vector<float>& dense, float* gradients) const;

  uint64_t seed_;
};

std::unique_ptr<Model> CreateModel(const ModelConfig& config);

// log(1 + exp(z)) - y z, the log loss of logit z, without overflow.
double LogLossOfLogit(double z, float label);

}  // namespace libra::train
