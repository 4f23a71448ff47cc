#include "train/ps_worker_trainer.h"

#include <algorithm>
#include <chrono>

#include "hotpath/node/epoch_trace.h"
#include "ps/ps.h"
#include "train/every_server_slicer.h"
#include "train/metrics.h"

namespace libra::train {
namespace {

using Clock = std::chrono::steady_clock;

float MillisecondsSince(Clock::time_point start) {
  return std::chrono::duration<float, std::milli>(Clock::now() - start).count();
}

}  // namespace

PsWorkerTrainer::PsWorkerTrainer(const Model& model, ps::KVWorker<float>* kv)
    : model_(model), kv_(kv), broadcast_(std::make_shared<bool>(false)) {
  kv_->set_slicer(EveryServerSlicer(broadcast_));
}

void PsWorkerTrainer::Pull(const std::vector<ParameterKey>& keys, std::vector<float>* values) {
  values->resize(keys.size() * model_.value_length());
  if (keys.empty()) return;
  kv_->Wait(kv_->Pull(keys, values));
}

void PsWorkerTrainer::Push(const std::vector<ParameterKey>& keys,
                           const std::vector<float>& gradients) {
  *broadcast_ = true;
  const int timestamp = kv_->Push(keys, gradients);
  *broadcast_ = false;
  kv_->Wait(timestamp);
}

WorkerEpoch PsWorkerTrainer::RunEpoch(
    uint32_t epoch, const Dataset& train, uint64_t iterations, uint32_t batch,
    const std::function<void(const WorkerProgress&)>& on_iteration, uint64_t first_iteration) {
  WorkerEpoch result;
  result.epoch = epoch;
  const auto epoch_start = Clock::now();
  const std::vector<ParameterKey> no_keys;
  const std::vector<float> no_values;
  for (uint64_t it = first_iteration; it < iterations; ++it) {
    IterationTiming timing;
    const size_t begin = std::min<size_t>(train.rows(), it * batch);
    const size_t end = std::min<size_t>(train.rows(), begin + batch);
    if (begin == end) {
      // Out of rows: still take part in the iteration.
      const auto start = Clock::now();
      Push(no_keys, no_values);
      timing.push_ms = MillisecondsSince(start);
    } else {
      auto start = Clock::now();
      MakeBatch(train, begin, end, model_.num_dense_keys(), &batch_);
      const float build_ms = MillisecondsSince(start);
      start = Clock::now();
      Pull(batch_.keys, &params_);
      // Traced under the epoch of the push it follows, as hot_read is.
      if (it > 0) hotpath::TraceEpoch("pulled", ps::MyRank(), static_cast<uint32_t>(it - 1));
      timing.pull_ms = MillisecondsSince(start);
      start = Clock::now();
      gradients_.resize(params_.size());
      predictions_.resize(batch_.rows());
      result.loss_sum +=
          model_.Evaluate(batch_, params_.data(), predictions_.data(), gradients_.data());
      result.rows += batch_.rows();
      timing.compute_ms = build_ms + MillisecondsSince(start);
      start = Clock::now();
      Push(batch_.keys, gradients_);
      hotpath::TraceEpoch("pushed", ps::MyRank(), static_cast<uint32_t>(it));
      timing.push_ms = MillisecondsSince(start);
    }
    timings_.push_back(timing);
    if (on_iteration) {
      on_iteration({epoch, it + 1, iterations, result.rows, result.loss_sum,
                    std::chrono::duration<double>(Clock::now() - epoch_start).count()});
    }
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - epoch_start).count();
  return result;
}

Evaluation PsWorkerTrainer::Evaluate(const Dataset& test, uint32_t batch) {
  std::vector<float> predictions(test.rows());
  Batch b;
  std::vector<float> params;
  for (size_t begin = 0; begin < test.rows(); begin += batch) {
    const size_t end = std::min<size_t>(test.rows(), begin + batch);
    MakeBatch(test, begin, end, model_.num_dense_keys(), &b);
    Pull(b.keys, &params);
    model_.Evaluate(b, params.data(), predictions.data() + begin, nullptr);
  }
  return {LogLoss(test.labels, predictions), Auc(test.labels, predictions)};
}

}  // namespace libra::train
