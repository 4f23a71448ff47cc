#include "bench/program_benchmark.h"

#include <gtest/gtest.h>

namespace libra::dataplane {
namespace {

// The benchmark itself throws when a packet is dropped or seen as a
// duplicate; here, in both layouts, every slot of every packet is added, by
// the row loop or the slot loop as the layout says.
TEST(ProgramBenchmarkTest, EverySlotOfEveryPacketIsAggregatedInBothLayouts) {
  for (const bool scattered : {false, true}) {
    ProgramBenchmarkOptions options;
    options.workers = 3;
    options.slots_per_packet = 8;
    options.cells_per_array = 64;
    options.packets_per_worker = 64;
    options.scattered_rows = scattered;
    const ProgramBenchmarkResult result =
        RunProgramBenchmark(MakeRowTraffic(options), 0.02, PipelineProfile::Tofino1());
    EXPECT_GT(result.packets, 0u) << scattered;
    EXPECT_EQ(result.packets % (3 * 64), 0u) << scattered;  // whole epochs
    EXPECT_EQ(result.values, result.packets * 8) << scattered;
    EXPECT_GT(result.packets_per_cpu_second, 0.0) << scattered;
    EXPECT_EQ(result.one_row_packets, scattered ? 0u : result.packets) << scattered;
  }
}

}  // namespace
}  // namespace libra::dataplane

namespace libra::dataplane {
namespace {

TEST(ProgramBenchmarkTest, TrafficOfAWorkerTheJobDoesNotHaveIsRefused) {
  ProgramBenchmarkOptions options;
  options.workers = 2;
  options.cells_per_array = 16;
  BenchTraffic traffic = MakeRowTraffic(options);
  traffic.epochs[0][1].worker = 2;
  EXPECT_THROW(RunProgramBenchmark(traffic, 0.01, PipelineProfile::Tofino1()),
               std::invalid_argument);
  traffic.epochs.clear();
  EXPECT_THROW(RunProgramBenchmark(traffic, 0.01, PipelineProfile::Tofino1()),
               std::invalid_argument);
}

}  // namespace
}  // namespace libra::dataplane
