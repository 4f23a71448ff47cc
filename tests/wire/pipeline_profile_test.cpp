#include "wire/pipeline_profile.h"

#include <gtest/gtest.h>

namespace libra::dataplane {
namespace {

JobShape DefaultShape() { return JobShape{8, 2, 8192, 32, 16}; }

TEST(PipelineProfileTest, DefaultJobFitsTofino1AndReportsMemory) {
  const FitReport report = PlaceRegisters(PipelineProfile::Tofino1(), DefaultShape());
  ASSERT_TRUE(report.fits) << (report.problems.empty() ? "" : report.problems[0]);
  EXPECT_EQ(report.arrays.size(), 4u + 32u);
  // 32 value arrays of 2 banks x 8192 cells x 64 bits, plus the bookkeeping.
  const std::uint64_t values = 32ull * 2 * 8192 * 64;
  const std::uint64_t bookkeeping = (8ull * 64 + 8 * 2 + 8 + 2) * 64;
  EXPECT_EQ(report.register_bits_used, values + bookkeeping);
  EXPECT_EQ(report.register_bits_budget, 12ull * 48 * 128 * 1024);
  EXPECT_GT(report.register_share(), 0.0);
  EXPECT_LT(report.register_share(), 1.0);
  for (const auto& array : report.arrays) {
    EXPECT_LT(array.stage, 12) << array.name;
    if (array.name.starts_with("value_")) {
      EXPECT_GE(array.stage, 3);
    }
  }
}

TEST(PipelineProfileTest, NoStageHoldsMoreArraysThanItHasStatefulAlus) {
  const FitReport report = PlaceRegisters(PipelineProfile::Tofino1(), DefaultShape());
  std::vector<int> per_stage(12, 0);
  for (const auto& array : report.arrays) ++per_stage[array.stage];
  for (int count : per_stage) EXPECT_LE(count, 4);
}

TEST(PipelineProfileTest, RefusesJobsThatDoNotFit) {
  const PipelineProfile tofino = PipelineProfile::Tofino1();
  JobShape shape = DefaultShape();
  shape.cells_per_array = 1 << 20;  // far more SRAM than a stage has
  EXPECT_FALSE(PlaceRegisters(tofino, shape).fits);

  shape = DefaultShape();
  shape.slots_per_packet = 33;
  EXPECT_FALSE(PlaceRegisters(tofino, shape).fits);

  PipelineProfile short_pipe = tofino;
  short_pipe.stages = 6;  // 3 + 3*4 ... not enough ALUs for 32 value arrays
  const FitReport report = PlaceRegisters(short_pipe, DefaultShape());
  EXPECT_FALSE(report.fits);
  ASSERT_FALSE(report.problems.empty());
  EXPECT_NE(report.problems[0].find("stateful ALU"), std::string::npos);

  shape = DefaultShape();
  shape.workers = 0;
  EXPECT_FALSE(PlaceRegisters(tofino, shape).fits);
  shape = DefaultShape();
  shape.scale_bits = 31;
  EXPECT_FALSE(PlaceRegisters(tofino, shape).fits);
}

TEST(PipelineProfileTest, KnowsProfilesByName) {
  EXPECT_TRUE(PipelineProfile::ByName("tofino1").has_value());
  EXPECT_FALSE(PipelineProfile::ByName("tofino9").has_value());
}

}  // namespace
}  // namespace libra::dataplane
