// What a worker tells the controller of its sampling phase: the counts of
// the keys it pushed, cut to the heaviest that could still be chosen.
//
// The controller keeps at most as many keys as the switch has cells (a key
// takes at least one), so a worker sends no more than that many: a job that
// pushes 10M distinct keys sends ~400k counts, not 10M (160 MB of JOIN and a
// controller sorting them). A key outside every worker's heaviest `limit`
// can no longer be chosen even if its sum over the workers would have placed
// it; with one worker the choice is exact.
#pragma once

#include <cstddef>
#include <vector>

#include "hotpath/messages/control_messages.h"

namespace libra::hotpath {

// The `limit` keys of `counts` with the most updates (ties: the lower key),
// in ascending key order, as a JOIN carries them.
std::vector<KeyCount> HeaviestCounts(std::vector<KeyCount> counts, std::size_t limit);

}  // namespace libra::hotpath
