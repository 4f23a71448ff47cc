// The worker's side of the hot path behind KVWorker<float> (the
// ps::WorkerHotPath hook): sampling before the first hot epoch, the hot/cold
// split of every push, fallback to the servers while the switch is down,
// resuming, replica repair and WRITTEN_KEYS reports. Its parts, each in its
// own file: KeySampler (sampling), SplitHotAndCold and PulledKeys (hot_split.h),
// HotKeyRoutes (which server owns a hot key), RetainedValues (for VALUES),
// ReplicaLag (when to repair the whole replica), HotSender (the switch).
// What stays here is the switch's incarnation: fallback and resume.
#pragma once

#include <cstdint>
#include <memory>

#include "ps/internal/hot_path_hooks.h"

namespace libra::hotpath {

// The worker path of customer `customer_id` of this process (a worker of its
// own: customer 0 of a one-worker process, or any customer that registered,
// docs/runtime.md "Customers as workers"); the hot path must be enabled.
std::unique_ptr<ps::WorkerHotPath> MakeWorkerPath(int customer_id,
                                                  ps::WorkerHotPath::ServerOf server_of);

// A job resumed from a checkpoint after `epoch` pushes per worker: this
// worker's next push is epoch `epoch`. Call before the first push.
void ResumeWorkerAtEpoch(uint32_t epoch);

}  // namespace libra::hotpath
