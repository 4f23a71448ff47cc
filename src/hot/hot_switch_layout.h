// The hot-value layout a switch pipeline can hold, so that the profiler and
// the controller never choose a hot set the switch cannot install.
//
// The pipeline profile (wire/pipeline_profile.h) says how many value
// slots a packet has and how much register memory each stage gives; the
// layout has one register array per slot and as many cells per array as the
// stages that hold the value arrays can store in both banks, next to the
// switch's own bookkeeping arrays.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hot/hot_set.h"

namespace libra::dataplane {
struct PipelineProfile;
}

namespace libra::hot {

// The hot capacity `libra profile` and the demo use unless told otherwise:
// the paper's calibration (the top 30,000 parameters take about half of all
// updates in its data), a small share of the default switch.
inline constexpr uint64_t kDefaultHotCapacityCells = 30'000;

// The largest layout `profile` holds with its maximum slots per packet, for a
// job of `workers` workers (their dedup state shares the register memory).
// Throws std::invalid_argument if not even one cell per array fits.
SwitchLayout SwitchLayoutFor(const dataplane::PipelineProfile& profile, int workers = 1);

// Why `layout` does not fit `profile` with `workers` workers; empty if it fits.
std::vector<std::string> LayoutProblems(const SwitchLayout& layout,
                                        const dataplane::PipelineProfile& profile, int workers = 1);

}  // namespace libra::hot
