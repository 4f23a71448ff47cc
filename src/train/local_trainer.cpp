#include "train/local_trainer.h"

#include <algorithm>
#include <chrono>

#include "train/batch.h"
#include "train/metrics.h"

namespace libra::train {

Evaluation Evaluate(const Model& model, ParameterTable& table, const Dataset& data,
                    uint32_t batch_size) {
  std::vector<float> predictions(data.rows()), params;
  Batch batch;
  for (size_t begin = 0; begin < data.rows(); begin += batch_size) {
    const size_t end = std::min(data.rows(), begin + batch_size);
    MakeBatch(data, begin, end, model.num_dense_keys(), &batch);
    params.resize(batch.keys.size() * model.value_length());
    table.Pull(batch.keys.data(), batch.keys.size(), params.data());
    model.Evaluate(batch, params.data(), predictions.data() + begin, nullptr);
  }
  return {LogLoss(data.labels, predictions), Auc(data.labels, predictions)};
}

std::pair<Dataset, Dataset> SplitHoldout(const Dataset& data, double test_fraction) {
  const size_t test_rows = static_cast<size_t>(static_cast<double>(data.rows()) * test_fraction);
  const size_t train_rows = data.rows() - test_rows;
  return {SliceRows(data, 0, train_rows), SliceRows(data, train_rows, data.rows())};
}

LocalTrainer::LocalTrainer(const ModelConfig& model, const OptimizerConfig& optimizer)
    : model_(CreateModel(model)),
      optimizer_(CreateOptimizer(optimizer)),
      table_(*model_, *optimizer_) {}

std::vector<EpochRecord> LocalTrainer::Train(
    const Dataset& train, const Dataset& test, const TrainOptions& options,
    const std::function<void(const EpochRecord&)>& on_epoch) {
  std::vector<EpochRecord> records;
  Batch batch;
  std::vector<float> params, gradients, predictions;
  const uint32_t length = model_->value_length();
  for (uint32_t epoch = 1; epoch <= options.epochs; ++epoch) {
    const auto start = std::chrono::steady_clock::now();
    double loss = 0;
    for (size_t begin = 0; begin < train.rows(); begin += options.batch_size) {
      const size_t end = std::min(train.rows(), begin + options.batch_size);
      MakeBatch(train, begin, end, model_->num_dense_keys(), &batch);
      params.resize(batch.keys.size() * length);
      gradients.resize(params.size());
      predictions.resize(batch.rows());
      table_.Pull(batch.keys.data(), batch.keys.size(), params.data());
      loss += model_->Evaluate(batch, params.data(), predictions.data(), gradients.data());
      table_.Push(batch.keys.data(), batch.keys.size(), gradients.data(), 1);
    }
    EpochRecord record;
    record.epoch = epoch;
    record.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    record.samples_per_second = static_cast<double>(train.rows()) / record.seconds;
    record.train_log_loss = train.rows() > 0 ? loss / static_cast<double>(train.rows()) : 0;
    record.test = Evaluate(*model_, table_, test);
    if (on_epoch) on_epoch(record);
    records.push_back(record);
  }
  return records;
}

}  // namespace libra::train
