// Libra's hot path as the layers above the runtime (training, tools) see it.
//
// The runtime turns the hot path on when LIBRA_SWITCH is set (docs/hotpath.md,
// "Turning it on", lists every LIBRA_* variable); applications do not change.
// The runtime itself reaches it through include/ps/internal/hot_path_hooks.h.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

namespace libra::hotpath {

// This process's hot-path state and counters, for job reports:
//   {"enabled": false} when the hot path is off; otherwise
//   "enabled": true, "role": "worker"|"server"|"scheduler",
//   "mode": "file"|"sampling", "first_hot_epoch", "hot_keys", "hot_values",
//   "scale_bits", and per role:
//   worker: "epochs_hot", "hot_values_pushed", "cold_values_pushed",
//           "slot_utilization" (values sent / (DATA packets x slots)),
//           "sender" (HotSenderCounters as an object);
//   server: "epochs_collected", "collector" (HotCollectorCounters).
// A worker process that is several workers (customers as workers,
// docs/hotpath.md) reports "role": "worker" and "customers": one worker
// report as above per worker, each with its "customer" id and "rank".
nlohmann::json NodeReport();

// A job resumed from a checkpoint after `epoch` pushes per worker: this
// worker's next push is epoch `epoch`, so that the hot path's epochs are
// those of the job it resumes. Call before the first push.
void ResumeAtEpoch(uint32_t epoch);

// Blocks until this server's hot path has applied epoch `epoch` to the
// request handle: at once when there is no hot path here, it owns no hot
// keys, or it starts after `epoch`. A checkpoint of iteration i waits for
// epoch i - 1 (one push per iteration), so that it holds both paths' updates.
void WaitUntilHotApplied(uint32_t epoch);

}  // namespace libra::hotpath
