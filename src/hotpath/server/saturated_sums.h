// Exact sums for the keys whose switch sums saturated. The switch's cells
// are 32-bit fixed point; a sum that overflowed was clamped there (or in
// the fallback, which uses the switch's arithmetic). The server asks every
// worker for its own values of those keys (VALUES: each keeps an epoch until
// its replica has it, which is after this server publishes it) and sums
// them here in 64 bits (ExactSum).
#pragma once

#include <cstdint>
#include <vector>

#include "hot/hot_set.h"
#include "hotpath/messages/control_messages.h"
#include "hotpath/server/hot_collector.h"

namespace libra::hotpath {

// Whether `answers` holds every one of `num_workers` workers' values (none
// of them kNotRetained): only then can the sums be made exact.
bool EveryWorkerAnswered(const std::vector<FallbackPush>& answers, std::uint32_t num_workers);

// Replaces the values of `epoch->saturated_keys` in `epoch` with the exact
// sums of the workers' `answers` (each answer's keys in any order, the hot
// set's lengths, other keys than those skipped; a malformed answer counts
// up to where it is readable).
// `scale_bits`: the job's fixed point. Returns how many values were wide
// (beyond even the 64-bit range at that scale: summed in double precision,
// ExactSum::wide).
std::uint64_t SumSaturatedExactly(const hot::HotSet& hot_set, int scale_bits,
                                  const std::vector<FallbackPush>& answers, CollectedEpoch* epoch);

}  // namespace libra::hotpath
