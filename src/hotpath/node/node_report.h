// Libra's hot path inside the parameter-server runtime, as tools see it.
//
// The runtime turns the hot path on when LIBRA_SWITCH is set (docs/hotpath.md,
// "Turning it on", lists every LIBRA_* variable); applications do not change.
// This header only exposes what a process can report about it.
#pragma once

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
nlohmann::json NodeReport();

}  // namespace libra::hotpath
