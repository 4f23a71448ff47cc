// Libra's hot path on a worker, as KVWorker<float> uses it (app 0, customer
// 0; other workers stay plain). Not part of the PS-lite API.
//
// Every Push/PushPull is one epoch (the e-th push of every worker is epoch e).
// Before the first hot epoch the worker counts the keys it pushes (sampling);
// at it, it joins the controller and from then on splits each push: hot keys
// go to the switch through a HotSender, the rest stays a PS-lite request.
// Completions of the hot part (the switch ACKed the FIN; for a pull, the
// replica has reached the last push) run in order on one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "ps/base.h"
#include "ps/sarray.h"

namespace ps::hotpath {

// A job resumed from a checkpoint after `epoch` pushes per worker: this
// worker's next push is epoch `epoch`, so that the hot path's epochs are
// those of the job it resumes. Call before the first push.
void ResumeAtEpoch(uint32_t epoch);

class WorkerPath {
 public:
  struct Parts {
    SArray<Key> keys;
    SArray<float> vals;
    SArray<int> lens;  // empty: one value per key... or as pushed
  };
  using PartDone = std::function<void(Parts hot)>;
  // The server rank the application's slicer sends each of `keys` (sorted) to.
  using ServerOf = std::function<std::vector<uint32_t>(const SArray<Key>& keys)>;

  // nullptr unless the hot path is configured (LIBRA_SWITCH).
  static std::unique_ptr<WorkerPath> Create(ServerOf server_of);
  virtual ~WorkerPath() = default;

  // One epoch's push: `all` is what the application pushed. Fills *cold with
  // what goes to the servers; returns true when a hot part is on its way,
  // and then `done` runs once it has completed, with the hot keys' new
  // values when `pull_back` (PushPull).
  virtual bool Push(const Parts& all, bool pull_back, Parts* cold, PartDone done) = 0;
  // A pull: fills *cold_keys with the keys to ask the servers for; returns
  // true when some keys are hot, and then `done` runs with their values.
  virtual bool Pull(const SArray<Key>& keys, SArray<Key>* cold_keys, PartDone done) = 0;
};

}  // namespace ps::hotpath
