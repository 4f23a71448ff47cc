// The LIBRA_* environment that turns the hot path on (docs/hotpath.md,
// "Turning it on"). Read once per process; a malformed variable stops the
// process with a message naming it, like the DMLC_* variables.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "wire/switch_job.h"

namespace libra::hotpath {

struct HotPathConfig {
  bool enabled = false;            // LIBRA_SWITCH is set
  libra::UdpEndpoint switch_data;  // LIBRA_SWITCH
  std::string switch_control;      // LIBRA_SWITCH_CONTROL (scheduler only)
  std::string hot_set_path;        // LIBRA_HOT_SET: "" means sampling
  uint32_t sample_epochs = 40;     // LIBRA_SAMPLE_EPOCHS (20 counted)
  uint64_t capacity_cells = 0;     // LIBRA_CAPACITY: 0 means the whole layout
  // LIBRA_CAPACITY=auto: the controller's cost model chooses the set that
  // pays on this job's links, which may be none (src/hot/cost_model.h).
  bool capacity_auto = false;
  double link_mbit = 0;  // LIBRA_LINK_MBIT: every host's link, for the cost model (0: unknown)
  // LIBRA_PLAIN_EPOCH: "measured" (the default): the cost model takes the
  // plain epoch the workers timed while sampling; "predicted": its own
  // prediction at link_mbit (to plan for links other than these).
  bool plain_epoch_measured = true;
  double shared_cores = 0;        // LIBRA_SHARED_CORES: cores all nodes share (0: own CPUs)
  uint32_t job_id = 1;            // LIBRA_JOB_ID
  std::string job_token;          // LIBRA_JOB_TOKEN; 128 random bits when unset
  std::optional<int> scale_bits;  // LIBRA_SCALE_BITS: overrides the controller's choice
  // LIBRA_SAVE_INSTALL: where the controller writes the INSTALL it decided
  // (a checkpointed job keeps its hot set, placement and scale with it).
  std::string save_install_path;
  // LIBRA_INSTALL_FILE: an INSTALL written that way; a resumed job runs the
  // hot path exactly as the job it resumes: this hot set, these owners,
  // this scale, from the same epoch on (no sampling).
  std::string install_path;
  std::optional<uint32_t> saved_first_epoch;  // that INSTALL's first epoch
  // LIBRA_UDP_SEGMENTATION=0: the engines send datagram by datagram instead
  // of in segmented runs (EngineLoopOptions::segmentation); 1 (the default)
  // otherwise.
  bool udp_segmentation = true;

  bool sampling() const { return hot_set_path.empty() && install_path.empty(); }
  // The epoch at which every node switches to the hot path.
  uint32_t first_hot_epoch() const {
    if (saved_first_epoch) return *saved_first_epoch;
    return sampling() ? sample_epochs : 0;
  }
  // The epoch at which a worker sends its JOIN. While sampling, halfway
  // through the sampling phase: the workers count the first half, and the
  // second half's plain epochs hide the controller's choice, which would
  // otherwise stall every worker at the first hot epoch (tens of ms for
  // ~100k sampled keys, several plain epochs on fast links). Otherwise at
  // the first hot epoch.
  uint32_t join_epoch() const {
    if (!sampling() || saved_first_epoch) return first_hot_epoch();
    return CountedOf(sample_epochs);
  }
  // The epochs counted of a sampling phase of `sample_epochs`: its first
  // half, rounded up.
  static uint32_t CountedOf(uint32_t sample_epochs) { return sample_epochs - sample_epochs / 2; }
  // The epochs whose pushes the workers count: those before the JOIN.
  uint32_t counted_epochs() const { return sampling() ? join_epoch() : 0; }
};

// This process's configuration (parsed on first use).
const HotPathConfig& Config();

}  // namespace libra::hotpath
