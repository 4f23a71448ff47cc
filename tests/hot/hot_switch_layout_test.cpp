#include "hot/hot_switch_layout.h"

#include <gtest/gtest.h>

#include "wire/pipeline_profile.h"

namespace libra::hot {
namespace {

using dataplane::PipelineProfile;

TEST(SwitchLayoutFor, TakesEverySlotAndAsManyCellsAsTheStagesHold) {
  const PipelineProfile tofino = PipelineProfile::Tofino1();
  const SwitchLayout layout = SwitchLayoutFor(tofino);
  EXPECT_EQ(layout.num_arrays, 32u);
  EXPECT_EQ(layout.num_banks, 2u);
  // Four value arrays share a stage of 48 x 128 Kbit, two banks of 64-bit cells.
  EXPECT_EQ(layout.cells_per_array, 48u * 128 * 1024 / (4 * 2 * 64));
  EXPECT_TRUE(LayoutProblems(layout, tofino).empty());

  SwitchLayout bigger = layout;
  ++bigger.cells_per_array;
  EXPECT_FALSE(LayoutProblems(bigger, tofino).empty());
}

TEST(SwitchLayoutFor, TheDefaultLayoutAndCapacityFitTheDefaultPipeline) {
  const SwitchLayout fitted = SwitchLayoutFor(PipelineProfile::Tofino1(), 256);
  const SwitchLayout defaults;
  EXPECT_EQ(defaults.num_arrays, fitted.num_arrays);
  EXPECT_EQ(defaults.cells_per_array, fitted.cells_per_array);
  EXPECT_EQ(defaults.num_banks, fitted.num_banks);
  EXPECT_LE(kDefaultHotCapacityCells, defaults.capacity());
}

TEST(LayoutProblems, NamesWhatDoesNotFit) {
  const PipelineProfile tofino = PipelineProfile::Tofino1();
  EXPECT_FALSE(LayoutProblems(SwitchLayout{33, 16, 2}, tofino).empty());  // slots per packet
  const std::vector<std::string> banks = LayoutProblems(SwitchLayout{32, 16, 3}, tofino);
  ASSERT_EQ(banks.size(), 1u);
  EXPECT_NE(banks[0].find("banks"), std::string::npos);
  EXPECT_TRUE(LayoutProblems(SwitchLayout{8, 1000, 2}, tofino).empty());

  PipelineProfile tiny = tofino;
  tiny.register_bits_per_stage = 64;  // not even one cell pair per bank
  EXPECT_THROW(SwitchLayoutFor(tiny), std::invalid_argument);
}

}  // namespace
}  // namespace libra::hot
