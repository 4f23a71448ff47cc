#include "train/model.h"

#include <cmath>
#include <stdexcept>

#include "train/deep_fm.h"
#include "train/factorization_machine.h"
#include "train/logistic_regression.h"

namespace libra::train {

ModelKind ParseModelKind(const std::string& name) {
  if (name == "lr") return ModelKind::kLogisticRegression;
  if (name == "fm") return ModelKind::kFactorizationMachine;
  if (name == "deepfm") return ModelKind::kDeepFm;
  throw std::invalid_argument("unknown model '" + name + "' (lr, fm, deepfm)");
}

std::string ModelKindName(ModelKind kind) {
  switch (kind) {
    case ModelKind::kLogisticRegression:
      return "lr";
    case ModelKind::kFactorizationMachine:
      return "fm";
    case ModelKind::kDeepFm:
      return "deepfm";
  }
  return "?";
}

std::unique_ptr<Model> CreateModel(const ModelConfig& config) {
  switch (config.kind) {
    case ModelKind::kLogisticRegression:
      return std::make_unique<LogisticRegression>(config);
    case ModelKind::kFactorizationMachine:
      return std::make_unique<FactorizationMachine>(config);
    case ModelKind::kDeepFm:
      return std::make_unique<DeepFm>(config);
  }
  throw std::invalid_argument("unknown model kind");
}

double LogLossOfLogit(double z, float label) {
  const double softplus = z > 0 ? z + std::log1p(std::exp(-z)) : std::log1p(std::exp(z));
  return softplus - label * z;
}

void Model::InitialValue(ParameterKey key, float* value) const {
  const int64_t dense = DenseIndexOf(key, num_dense_keys());
  const uint32_t length = value_length();
  for (uint32_t j = 0; j < length; ++j) {
    if (dense < 0) {
      value[j] = InitialFeatureValue(key, j);
    } else {
      const size_t index = static_cast<size_t>(dense) * length + j;
      value[j] = index < num_dense_parameters() ? InitialDenseValue(index) : 0.0f;
    }
  }
}

float Model::HashUniform(uint64_t a, uint64_t b, float scale) const {
  const uint64_t h = Mix64(Mix64(a ^ seed_) + b);
  return scale * static_cast<float>(static_cast<double>(h >> 11) * 0x1.0p-52 - 1.0);
}

void Model::GatherDense(const Batch& batch, const float* params, std::vector<float>* dense) const {
  const uint32_t length = value_length();
  dense->resize(num_dense_parameters());
  for (size_t j = 0; j < dense->size(); ++j) {
    (*dense)[j] = params[batch.dense_slots[j / length] * length + j % length];
  }
}

void Model::ScatterDense(const Batch& batch, const std::vector<float>& dense,
                         float* gradients) const {
  const uint32_t length = value_length();
  for (size_t j = 0; j < dense.size(); ++j) {
    gradients[batch.dense_slots[j / length] * length + j % length] = dense[j];
  }
}

}  // namespace libra::train
