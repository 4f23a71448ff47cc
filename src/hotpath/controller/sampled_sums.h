// The controller's view of the sampling phase: every worker's counts of a
// key summed, and the keys ranked heaviest first, as ChooseHotKeys ranks
// them, for the hot-set choice (controller.cpp) to fill the switch from.
//
// Both are on the path every worker waits on at the first hot epoch, and a
// JOIN names up to the switch's cells (~100k keys and more), so they avoid
// hashing and sorting the keys themselves: a JOIN's counts come in key order
// (HeaviestCounts), so the workers' lists are merged as they arrive, and the
// ranking sorts one 64-bit word per key.
#pragma once

#include <cstdint>
#include <vector>

#include "hot/hot_set.h"
#include "hotpath/messages/control_messages.h"

namespace libra::hotpath {

struct SampledSums {
  std::vector<hot::HotKey> keys;  // ascending; frequency: updates over every JOIN
  // Per key: the server (and in `keys`, the length) that the first JOIN
  // naming it gave it.
  std::vector<uint32_t> servers;
};

// Adds one JOIN's counts (ascending by key, as DecodeJoin gives them; a key
// may repeat) to `sums` by merging the two lists, so that the controller
// sums each JOIN as it arrives and only the last one's merge is left when
// all are in. A key already in `sums` keeps its server and length; keys of
// length 0 are left out (nothing to aggregate).
void AddSampledCounts(const std::vector<KeyCount>& counts, SampledSums* sums);

// The counts of `joins` (one list per JOIN, in JOIN order, any order within
// a list, though key order is fastest) summed per key, as AddSampledCounts
// of each in turn.
SampledSums SumSampledCounts(const std::vector<const std::vector<KeyCount>*>& joins);

// The places in `keys` (ascending, distinct) from the heaviest to the
// lightest, ties to the lower key. Updates above 2^32 - 1 rank as 2^32 - 1.
std::vector<uint32_t> RankHeaviestFirst(const std::vector<hot::HotKey>& keys);

}  // namespace libra::hotpath
