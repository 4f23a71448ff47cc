// Trains a model in one process, with a ParameterTable standing in for the
// servers: the same batch, model and optimizer code as a PS worker and
// server, without the network. Used for the quality checks (LIBLINEAR
// comparison) and the compute benchmark.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "data/dataset.h"
#include "train/model.h"
#include "train/optimizer.h"
#include "train/parameter_table.h"

namespace libra::train {

struct TrainOptions {
  uint32_t epochs = 1;
  uint32_t batch_size = 1000;
};

struct Evaluation {
  double log_loss = 0;
  double auc = 0.5;
};

struct EpochRecord {
  uint32_t epoch = 0;
  double train_log_loss = 0;  // mean over the epoch's batches, before each update
  Evaluation test;
  double seconds = 0;
  double samples_per_second = 0;
};

// Predictions for every row of `data` from the parameters in `table`.
Evaluation Evaluate(const Model& model, ParameterTable& table, const Dataset& data,
                    uint32_t batch_size = 4096);

// Rows [0, n - n * fraction) and the rest: the held-out part is the end of
// the file, as in time-ordered click logs.
std::pair<Dataset, Dataset> SplitHoldout(const Dataset& data, double test_fraction);

class LocalTrainer {
 public:
  LocalTrainer(const ModelConfig& model, const OptimizerConfig& optimizer);

  // Trains on `train` and evaluates on `test` after each epoch; `on_epoch`
  // (if set) sees each record as it is made.
  std::vector<EpochRecord> Train(const Dataset& train, const Dataset& test,
                                 const TrainOptions& options,
                                 const std::function<void(const EpochRecord&)>& on_epoch = {});

  const Model& model() const { return *model_; }
  ParameterTable& table() { return table_; }

 private:
  std::unique_ptr<Model> model_;
  std::unique_ptr<Optimizer> optimizer_;
  ParameterTable table_;
};

}  // namespace libra::train
