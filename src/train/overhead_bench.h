// `libra bench overhead`: the hot path's fixed cost, seen side by side with
// the plain parameter server on loopback, where bandwidth is free and every
// millisecond Libra adds is its own.
//
// For every configuration (model x batch x workers x servers) it trains
// once on the plain PS and then once with each hot set asked for (the cost
// model's automatic one, a forced set of N keys, the whole switch), runs
// interleaved, with the same binary as nodes. Each run is a full `libra
// train` job; the bench reads its report.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace libra::train {

struct OverheadBenchOptions {
  std::string out_dir = "libra-bench-overhead";  // cached data sets and reports
  uint64_t rows = 40000;                         // of each data set
  uint32_t epochs = 1;
  std::vector<std::string> models = {"lr", "deepfm"};  // deepfm trains on Criteo-format data
  std::vector<uint32_t> batches = {200, 1000};
  std::vector<int> workers = {2, 4};
  std::vector<int> servers = {1, 2};
  // "auto": the cost model's set; "whole": every sampled key that fits the
  // switch; a number: that many keys forced (their cells: keys x values per key);
  // "plain": the plain PS again, against itself (the bench's own noise).
  std::vector<std::string> hot_sets = {"auto", "30000", "whole"};
  // Rounds of every configuration, interleaved; odd rounds run the plain
  // reference after the hot sets instead of before them.
  uint32_t repeat = 1;
  // Every run, plain and Libra alike, under SCHED_FIFO: recorded in the
  // report; the caller enters it before the bench starts any process
  // (launch/realtime.h), which every run then inherits.
  bool realtime = false;
};

// Throws std::invalid_argument naming a bad option.
void CheckOverheadBenchOptions(const OverheadBenchOptions& options);

// Runs the bench; `self` is the `libra` binary. Returns the report:
// {"options": ..., "configs": [ {model, batch, workers, servers, hot_set,
//   round, plain: {...}, libra: {...}, ratio}, ... ], "summary": [ {model,
//   batch, workers, servers, hot_set, ratios, median_ratio, min_ratio,
//   max_ratio}, ... ] (one summary entry per configuration and hot set, over
//   the rounds), "hot_sets": [ {hot_set, configurations, rounds,
//   geometric_mean_ratio, medians_at_least_0_95}, ... ] (one per hot set,
//   over every configuration and round)}, where plain and libra hold
// samples_per_second, worker 0's per-iteration split, server 0's hot-path
// time per epoch, and packets and bytes per epoch by kind at every node.
// Prints a table as it goes. Throws std::runtime_error when a run fails.
nlohmann::json RunOverheadBench(const OverheadBenchOptions& options, const std::string& self);

}  // namespace libra::train
