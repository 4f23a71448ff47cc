// How a worker's push divides between the hot path and the servers: a key
// goes hot when it is in the hot set with the same number of values as the
// hot set gave it (a key pushed with another length than it was sampled
// with has no cells that fit it, and goes to its server as before).
#pragma once

#include <cstddef>

#include "hot/hot_set.h"
#include "ps/internal/hot_path_hooks.h"

namespace libra::hotpath {

// The number of values key `i` of `push` has: its lens entry, or an even
// share of the values when the push has no lens.
int ValuesOfKey(const ps::WorkerHotPath::Parts& push, std::size_t i);

// Appends each key of `push`, with its values, to `hot` or `cold`, in the
// push's order. `hot` always gets lens; `cold` gets them when `push` had
// them.
void SplitHotAndCold(const hot::HotSet& hot_set, const ps::WorkerHotPath::Parts& push,
                     ps::WorkerHotPath::Parts* hot, ps::WorkerHotPath::Parts* cold);

}  // namespace libra::hotpath
