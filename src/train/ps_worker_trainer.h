// A training worker on the parameter server: for each iteration it builds
// its batch, pulls the batch's parameters, computes the gradient of the
// batch's mean log loss and pushes it to every server, then waits for the
// push, which in synchronous mode returns once all workers' gradients are
// applied (see sync_optimizer_server.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "data/dataset.h"
#include "ps/kv_app.h"
#include "train/batch.h"
#include "train/local_trainer.h"
#include "train/model.h"

namespace libra::train {

struct IterationTiming {
  float pull_ms = 0;
  float compute_ms = 0;  // batch build, forward and backward
  float push_ms = 0;     // until every worker's gradient is applied
};

struct WorkerEpoch {
  uint32_t epoch = 0;
  double loss_sum = 0;  // summed log loss of the rows trained on, before each update
  uint64_t rows = 0;
  double seconds = 0;
};

struct WorkerProgress {
  uint32_t epoch = 0;
  uint64_t iteration = 0;   // within the epoch, 1-based
  uint64_t iterations = 0;  // per epoch
  uint64_t rows = 0;        // trained on by this worker in this epoch so far
  double loss_sum = 0;      // over those rows
  double seconds = 0;       // since the epoch began
};

class PsWorkerTrainer {
 public:
  // Installs EveryServerSlicer on `kv`, which must outlive the trainer.
  PsWorkerTrainer(const Model& model, ps::KVWorker<float>* kv);

  // Runs iterations first_iteration .. iterations-1 over `train`, `batch`
  // rows each (fewer, or none, once the rows run out): iteration `it` trains
  // on rows it*batch onwards, so a resumed epoch (first_iteration > 0) sees
  // exactly the rows an uninterrupted one would. `on_iteration` sees each
  // iteration's end.
  WorkerEpoch RunEpoch(uint32_t epoch, const Dataset& train, uint64_t iterations, uint32_t batch,
                       const std::function<void(const WorkerProgress&)>& on_iteration = {},
                       uint64_t first_iteration = 0);

  // Log loss and AUC on `test` with the servers' current parameters (pulls only).
  Evaluation Evaluate(const Dataset& test, uint32_t batch = 4096);

  const std::vector<IterationTiming>& timings() const { return timings_; }

 private:
  void Pull(const std::vector<ParameterKey>& keys, std::vector<float>* values);
  void Push(const std::vector<ParameterKey>& keys, const std::vector<float>& gradients);

  const Model& model_;
  ps::KVWorker<float>* kv_;
  std::shared_ptr<bool> broadcast_;
  Batch batch_;
  std::vector<float> params_, gradients_, predictions_;
  std::vector<IterationTiming> timings_;
};

}  // namespace libra::train
