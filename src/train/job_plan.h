// How a synchronous job divides a data set: the held-out rows, each worker's
// training rows, and the number of iterations every worker runs per epoch.
//
// The held-out split is the last `test_fraction` of the file's valid rows
// (as SplitHoldout does). The training rows are dealt round-robin: worker i
// trains on rows i, i + N, i + 2N, ... which is exactly shard i of
// ReadDataset cut where the held-out part begins. `batch` is per worker, so
// an iteration covers N * batch consecutive rows of the file: the same rows
// one worker with batch N * batch would see, which is why N workers and one
// worker with the same total batch compute the same update.
#pragma once

#include <cstdint>

namespace libra::train {

struct JobPlan {
  uint64_t total_rows = 0;
  uint64_t train_rows = 0;
  uint64_t test_rows = 0;
  uint32_t workers = 1;
  uint32_t batch = 1;  // per worker
  // Every worker runs this many iterations per epoch (BSP needs the same
  // count everywhere); a worker whose rows ran out pushes an empty gradient.
  uint64_t iterations_per_epoch = 0;

  static JobPlan Make(uint64_t total_rows, double test_fraction, uint32_t workers, uint32_t batch);

  // Training rows of worker `rank`: the first this-many rows of its shard.
  uint64_t TrainRowsOfWorker(uint32_t rank) const;
};

}  // namespace libra::train
