// A KVWorker slicer for synchronous training with several servers.
//
// A BSP server completes an iteration when it has one push from every
// worker, so a worker must push to every server each iteration even when its
// batch has no keys in that server's range. While `broadcast` is true (set
// around a push) this slicer marks every server's slice as non-empty, and the
// runtime sends an empty request where there are no keys; otherwise (pulls)
// it slices like the runtime's default and skips servers with no keys, whose
// empty pull answer would carry no arrays.
#pragma once

#include <memory>

#include "ps/kv_app.h"

namespace libra::train {

// Keys must be sorted; values are vals.size() / keys.size() per key (no lens).
ps::KVWorker<float>::Slicer EveryServerSlicer(std::shared_ptr<const bool> broadcast);

}  // namespace libra::train
