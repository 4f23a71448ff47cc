// Basic types shared by the whole PS-lite-compatible API.
#pragma once

#include <cstdint>
#include <limits>

#include "ps/internal/utils.h"

namespace ps {

// A parameter key. Keys of one request are sorted and unique.
using Key = uint64_t;
// The largest key; server key ranges split [0, kMaxKey).
static const Key kMaxKey = std::numeric_limits<Key>::max();

// Node groups, combinable by addition: kServerGroup + kWorkerGroup reaches
// every server and worker.
static const int kScheduler = 1;
static const int kServerGroup = 2;
static const int kWorkerGroup = 4;

}  // namespace ps
