// The LIBRA_* environment that turns the hot path on (docs/hotpath.md,
// "Turning it on"). Read once per process; a malformed variable stops the
// process with a message naming it, like the DMLC_* variables.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "libra/switch_job.h"

namespace ps::hotpath {

struct HotPathConfig {
  bool enabled = false;             // LIBRA_SWITCH is set
  libra::UdpEndpoint switch_data;   // LIBRA_SWITCH
  std::string switch_control;       // LIBRA_SWITCH_CONTROL (scheduler only)
  std::string hot_set_path;         // LIBRA_HOT_SET: "" means sampling
  uint32_t sample_epochs = 20;      // LIBRA_SAMPLE_EPOCHS
  uint64_t capacity_cells = 0;      // LIBRA_CAPACITY: 0 means the whole layout
  uint32_t job_id = 1;              // LIBRA_JOB_ID
  std::string job_token = "libra";  // LIBRA_JOB_TOKEN
  std::optional<int> scale_bits;    // LIBRA_SCALE_BITS: overrides the controller's choice

  bool sampling() const { return hot_set_path.empty(); }
  // The epoch at which every node switches to the hot path.
  uint32_t first_hot_epoch() const { return sampling() ? sample_epochs : 0; }
};

// This process's configuration (parsed on first use).
const HotPathConfig& Config();

}  // namespace ps::hotpath
