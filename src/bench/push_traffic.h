// DATA packets of sparse pushes, made the way workers make them, as traffic
// for the switch program's benchmark (dataplane/program_benchmark.h).
//
// Each worker's batch draws one key per field per row, Zipf-like within a
// field (the popularity of `libra gen-data`'s synthetic sets); the hot set is
// the most popular keys that fill the switch's cells, placed by heat; each
// worker packs the distinct hot keys of its batch with the layout-aware
// packer (hot_packets.h), so a packet's slots address whatever rows its
// per-array queues hold, with holes where a queue ran dry.
#pragma once

#include <cstdint>

#include "bench/program_benchmark.h"

namespace libra::hotpath {

struct PushTrafficOptions {
  int workers = 8;
  int slots_per_packet = 32;
  std::uint32_t cells_per_array = 8192;
  std::uint32_t batch = 1000;      // rows per worker per iteration
  std::uint32_t fields = 26;       // one key per field per row
  std::uint64_t keys = 1'000'000;  // vocabulary over all fields
  double skew = 0.85;              // Zipf exponent of popularity within a field
  std::uint32_t iterations = 8;    // epochs made, then replayed
  std::uint64_t seed = 1;
};

struct PushTraffic {
  dataplane::BenchTraffic traffic;
  std::uint64_t hot_keys = 0;
  double hot_share = 0;       // of the batches' key occurrences, those of hot keys
  std::uint64_t packets = 0;  // over the iterations made
  std::uint64_t values = 0;
  // Different cells the workers of one iteration add into, on average: the
  // register memory an epoch touches.
  double cells_per_epoch = 0;
};

// Throws std::invalid_argument naming an option out of range.
PushTraffic MakePushTraffic(const PushTrafficOptions& options);

}  // namespace libra::hotpath
