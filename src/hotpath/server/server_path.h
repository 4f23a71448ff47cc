// The server's side of the hot path behind KVServer<float> (the
// ps::ServerHotPath hook): each epoch's sums, from the switch or from the
// workers' fallback pushes, applied in order through the request handle,
// then the new values published to the workers.
#pragma once

#include <cstdint>
#include <memory>

#include "ps/internal/hot_path_hooks.h"

namespace libra::hotpath {

// The server path of this process; the hot path must be enabled.
std::unique_ptr<ps::ServerHotPath> MakeServerPath(ps::ServerHotPath::Handle handle);

// Blocks until this process's server path (if any) has applied epoch `epoch`.
void WaitUntilServerApplied(uint32_t epoch);

}  // namespace libra::hotpath
