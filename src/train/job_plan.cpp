#include "train/job_plan.h"

namespace libra::train {

JobPlan JobPlan::Make(uint64_t total_rows, double test_fraction, uint32_t workers, uint32_t batch) {
  JobPlan plan;
  plan.total_rows = total_rows;
  plan.test_rows = static_cast<uint64_t>(static_cast<double>(total_rows) * test_fraction);
  plan.train_rows = total_rows - plan.test_rows;
  plan.workers = workers;
  plan.batch = batch;
  // Worker 0 has the most rows.
  const uint64_t most = plan.TrainRowsOfWorker(0);
  plan.iterations_per_epoch = (most + batch - 1) / batch;
  return plan;
}

uint64_t JobPlan::TrainRowsOfWorker(uint32_t rank) const {
  return train_rows > rank ? (train_rows - rank + workers - 1) / workers : 0;
}

}  // namespace libra::train
