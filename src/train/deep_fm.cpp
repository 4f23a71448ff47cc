#include "train/deep_fm.h"

#include <Eigen/Dense>
#include <cmath>
#include <stdexcept>

namespace libra::train {
namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMatrixMap = Eigen::Map<const RowMatrix>;
using MatrixMap = Eigen::Map<RowMatrix>;
using ConstVectorMap = Eigen::Map<const Eigen::VectorXf>;
using VectorMap = Eigen::Map<Eigen::VectorXf>;

}  // namespace

DeepFm::DeepFm(const ModelConfig& config)
    : FactorizationMachine(config), num_fields_(config.num_fields) {
  if (num_fields_ == 0) throw std::invalid_argument("DeepFM needs at least one field");
  size_t offset = 1;  // the bias
  uint32_t in = num_fields_ * dim_;
  std::vector<uint32_t> widths = config.hidden_units;
  widths.push_back(1);
  for (uint32_t out : widths) {
    if (out == 0) throw std::invalid_argument("DeepFM hidden layers need at least one unit");
    layers_.push_back({in, out, offset, offset + static_cast<size_t>(in) * out});
    offset += static_cast<size_t>(in) * out + out;
    in = out;
  }
  dense_size_ = offset;
}

float DeepFm::InitialDenseValue(size_t j) const {
  for (const Layer& layer : layers_) {
    if (j >= layer.weights && j < layer.biases) {
      // Glorot-uniform, so ReLU activations neither vanish nor explode.
      return HashUniform(~uint64_t{0}, j,
                         std::sqrt(6.0f / static_cast<float>(layer.in + layer.out)));
    }
  }
  return 0.0f;  // biases
}

double DeepFm::Evaluate(const Batch& batch, const float* params, float* predictions,
                        float* gradients) const {
  const uint32_t length = value_length();
  const Eigen::Index rows = static_cast<Eigen::Index>(batch.rows());
  std::vector<float> logits, sums, dlogits, dense;
  FmForward(batch, params, &logits, &sums);
  GatherDense(batch, params, &dense);

  // Field embeddings: row r, field f -> sum of v_i x_i over the row's features in f.
  RowMatrix embeddings = RowMatrix::Zero(rows, num_fields_ * dim_);
  for (Eigen::Index r = 0; r < rows; ++r) {
    for (uint32_t i = batch.row_begin[r]; i < batch.row_begin[r + 1]; ++i) {
      if (batch.fields[i] >= num_fields_) continue;  // fields the model was not built for
      const float* v = params + static_cast<size_t>(batch.slots[i]) * length + 1;
      float* e = embeddings.data() + r * embeddings.cols() + batch.fields[i] * dim_;
      for (uint32_t k = 0; k < dim_; ++k) e[k] += v[k] * batch.values[i];
    }
  }

  // Forward: activations[0] = embeddings, then one per layer (ReLU on hidden ones).
  std::vector<RowMatrix> activations{embeddings};
  for (size_t l = 0; l < layers_.size(); ++l) {
    const Layer& layer = layers_[l];
    ConstMatrixMap w(dense.data() + layer.weights, layer.out, layer.in);
    ConstVectorMap b(dense.data() + layer.biases, layer.out);
    RowMatrix z = activations.back() * w.transpose();
    z.rowwise() += b.transpose();
    if (l + 1 < layers_.size()) z = z.cwiseMax(0.0f);
    activations.push_back(std::move(z));
  }
  for (Eigen::Index r = 0; r < rows; ++r) logits[r] += dense[0] + activations.back()(r, 0);
  const double loss = ApplyLoss(batch, logits, predictions, &dlogits);
  if (gradients == nullptr) return loss;

  std::fill_n(gradients, batch.keys.size() * length, 0.0f);
  FmBackward(batch, params, dlogits, sums, gradients);
  std::vector<float> dense_gradients(dense.size(), 0.0f);
  RowMatrix upstream = Eigen::Map<const RowMatrix>(dlogits.data(), rows, 1);
  for (float d : dlogits) dense_gradients[0] += d;
  for (size_t l = layers_.size(); l-- > 0;) {
    const Layer& layer = layers_[l];
    if (l + 1 < layers_.size()) {
      upstream = upstream.cwiseProduct((activations[l + 1].array() > 0.0f).cast<float>().matrix());
    }
    MatrixMap dw(dense_gradients.data() + layer.weights, layer.out, layer.in);
    VectorMap db(dense_gradients.data() + layer.biases, layer.out);
    dw = upstream.transpose() * activations[l];
    db = upstream.colwise().sum().transpose();
    ConstMatrixMap w(dense.data() + layer.weights, layer.out, layer.in);
    upstream = upstream * w;  // now d(loss)/d(activations[l])
  }
  ScatterDense(batch, dense_gradients, gradients);

  // Back into the embeddings: dv_i += x_i * d(loss)/d(field embedding).
  for (Eigen::Index r = 0; r < rows; ++r) {
    for (uint32_t i = batch.row_begin[r]; i < batch.row_begin[r + 1]; ++i) {
      if (batch.fields[i] >= num_fields_) continue;
      float* g = gradients + static_cast<size_t>(batch.slots[i]) * length + 1;
      const float* de = upstream.data() + r * upstream.cols() + batch.fields[i] * dim_;
      for (uint32_t k = 0; k < dim_; ++k) g[k] += de[k] * batch.values[i];
    }
  }
  return loss;
}

}  // namespace libra::train
