#include "hot/hot_profiler.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "zipf_data.h"

namespace libra::hot {
namespace {

ProfileOptions SmallSwitch() {
  ProfileOptions options;
  options.layout = SwitchLayout{32, 16, 2};  // 512 cells
  options.batch_size = 100;
  options.workers = 4;
  return options;
}

TEST(HotProfiler, SampleFindsNearlyTheBestSetAndPacksWithoutConflicts) {
  const testing::GeneratedRows data = testing::MakeZipfRows(240000, 10, 20000, 1.1, 11);
  ProfileOptions options = SmallSwitch();
  options.sample_fraction = 0.05;
  const ProfileResult result = ProfileHotParameters(data.view(), options);
  const ProfileReport& report = result.report;

  EXPECT_EQ(report.rows, 240000u);
  EXPECT_EQ(report.epochs, 600u);
  EXPECT_EQ(report.sampled_epochs, 30u);  // 5% of 600
  EXPECT_EQ(report.sampled_rows, 30u * 400);
  EXPECT_TRUE(report.counter_exact);
  EXPECT_EQ(report.hot_values, 512u);
  EXPECT_EQ(result.hot_set.size(), report.hot_keys);

  ASSERT_TRUE(report.evaluated);
  EXPECT_GT(report.optimal_coverage, 0.3);
  EXPECT_LE(report.sampled_coverage, report.optimal_coverage + 1e-12);
  EXPECT_GE(report.coverage_ratio, 0.98);
  EXPECT_GT(report.recall, 0.8);

  EXPECT_EQ(report.heat_layout_aware.total.conflicts, 0u);
  EXPECT_GT(report.hash_naive.total.conflicts, 0u);
  EXPECT_DOUBLE_EQ(report.conflict_reduction, 1.0);
  EXPECT_EQ(report.heat_layout_aware.total.values, report.hash_naive.total.values);
  EXPECT_GT(report.heat_layout_aware.total.utilisation(), 0.5);

  const nlohmann::json json = ToJson(report);
  EXPECT_DOUBLE_EQ(json["coverage"]["ratio"].get<double>(), report.coverage_ratio);
  EXPECT_EQ(json["replay"]["heat_layout_aware"]["conflicts"].get<uint64_t>(), 0u);
}

// The first tenth of the rows uses keys never seen again: a profiler that
// read only the head would choose them and cover almost nothing.
TEST(HotProfiler, SamplesAcrossTheWholeDataNotItsHead) {
  testing::GeneratedRows data = testing::MakeZipfRows(40000, 8, 5000, 1.1, 5);
  const uint64_t head_end = data.row_begin[4000];
  for (uint64_t i = 0; i < head_end; ++i) data.keys[i] += uint64_t{1} << 62;
  ProfileOptions options = SmallSwitch();
  options.sample_fraction = 0.1;
  const ProfileReport report = ProfileHotParameters(data.view(), options).report;
  EXPECT_GE(report.coverage_ratio, 0.95);
}

TEST(HotProfiler, CapacityMinimumFrequencyAndValueLengthShapeTheSet) {
  const testing::GeneratedRows data = testing::MakeZipfRows(8000, 6, 3000, 1.0, 9);
  ProfileOptions options = SmallSwitch();
  options.sample_fraction = 0.5;
  options.layout = SwitchLayout{32, 64, 2};
  options.value_len = 4;
  options.capacity_cells = 1000;
  const ProfileResult wide = ProfileHotParameters(data.view(), options);
  EXPECT_EQ(wide.report.hot_keys, 250u);
  EXPECT_EQ(wide.report.hot_values, 1000u);
  EXPECT_EQ(wide.report.heat_layout_aware.total.conflicts, 0u);

  options.min_frequency = 5;
  const ProfileResult frequent = ProfileHotParameters(data.view(), options);
  for (const HotKey& key : frequent.hot_set.keys()) EXPECT_GE(key.frequency, 5u);
  EXPECT_LE(frequent.report.hot_keys, wide.report.hot_keys);

  // Per epoch: at least 3 pushes per sampled epoch, over all workers.
  options.min_frequency = 0;
  options.min_pushes_per_epoch = 3;
  const ProfileResult paying = ProfileHotParameters(data.view(), options);
  ASSERT_GT(paying.report.sampled_epochs, 0u);
  ASSERT_GT(paying.report.hot_keys, 0u);
  EXPECT_LT(paying.report.hot_keys, wide.report.hot_keys);
  for (const HotKey& key : paying.hot_set.keys()) {
    EXPECT_GE(key.frequency, 3 * paying.report.sampled_epochs);
  }
}

// Two keys in the same pushes tie on updates; the one in more rows is the
// better bet, whatever the key order says.
TEST(HotProfiler, BreaksTiesInUpdatesByOccurrences) {
  testing::GeneratedRows data;
  const Key rarer = 1, commoner = 2;
  for (int push = 0; push < 10; ++push) {
    data.keys.insert(data.keys.end(), {rarer, commoner});  // row 1
    data.row_begin.push_back(data.keys.size());
    data.keys.insert(data.keys.end(), {commoner, 100 + Key(push)});  // row 2
    data.row_begin.push_back(data.keys.size());
  }
  ProfileOptions options = SmallSwitch();
  options.batch_size = 2;
  options.workers = 1;
  options.sample_fraction = 1.0;
  options.capacity_cells = 1;
  const ProfileResult result = ProfileHotParameters(data.view(), options);
  ASSERT_EQ(result.hot_set.size(), 1u);
  EXPECT_EQ(result.hot_set.keys()[0].key, commoner);
  EXPECT_EQ(result.hot_set.keys()[0].frequency, 10u);  // updates, not rows
  EXPECT_EQ(result.report.sampled_updates, 30u);
  EXPECT_EQ(result.report.sampled_occurrences, 40u);
}

// The three steps compose: a sample taken apart from the evaluation gives
// the same report as the one-call profile.
TEST(HotProfiler, SampleProfileAndEvaluationComposeToTheOneCallProfile) {
  const testing::GeneratedRows data = testing::MakeZipfRows(40000, 8, 5000, 1.1, 3);
  ProfileOptions options = SmallSwitch();
  const ProfileResult whole = ProfileHotParameters(data.view(), options);

  const EpochSample sample = SampleEpochs(data.view(), options);
  EXPECT_EQ(sample.epochs(), 5u);  // 5% of 100
  EXPECT_EQ(sample.rows().rows(), 2000u);
  EXPECT_TRUE(sample.data_rows_exact);
  ProfileResult parts = ProfileSample(sample, options);
  EXPECT_FALSE(parts.report.evaluated);
  EvaluateCoverage(data.view(), options, parts.hot_set, &parts.report);
  EXPECT_TRUE(parts.report.evaluated);
  EXPECT_DOUBLE_EQ(parts.report.coverage_ratio, whole.report.coverage_ratio);
  EXPECT_DOUBLE_EQ(parts.report.recall, whole.report.recall);
  EXPECT_EQ(parts.report.heat_layout_aware.total.packets,
            whole.report.heat_layout_aware.total.packets);
  ASSERT_EQ(parts.hot_set.size(), whole.hot_set.size());
  for (size_t i = 0; i < parts.hot_set.size(); ++i) {
    EXPECT_EQ(parts.hot_set.keys()[i].key, whole.hot_set.keys()[i].key);
  }
}

TEST(HotProfiler, SampledEpochsAreSpreadOverStrata) {
  const std::vector<uint64_t> epochs = ChooseSampledEpochs(1000, 0.05, 7);
  ASSERT_EQ(epochs.size(), 50u);
  for (size_t i = 0; i < epochs.size(); ++i) {
    EXPECT_GE(epochs[i], i * 20);
    EXPECT_LT(epochs[i], (i + 1) * 20);
  }
  EXPECT_EQ(ChooseSampledEpochs(3, 0.01, 1).size(), 1u);  // at least one
  EXPECT_EQ(ChooseSampledEpochs(3, 1.0, 1), (std::vector<uint64_t>{0, 1, 2}));
  EXPECT_TRUE(ChooseSampledEpochs(0, 0.5, 1).empty());
}

// A key with one value per register array fills a whole row of slots, so
// heat placement packs such pushes perfectly whatever keys they carry.
TEST(HotProfiler, KeysAsWideAsThePacketFillEverySlot) {
  const testing::GeneratedRows data = testing::MakeZipfRows(8000, 6, 3000, 1.0, 9);
  ProfileOptions options = SmallSwitch();
  options.value_len = 32;
  const ProfileReport report = ProfileHotParameters(data.view(), options).report;
  EXPECT_EQ(report.hot_keys, 16u);
  EXPECT_DOUBLE_EQ(report.heat_layout_aware.total.utilisation(), 1.0);
  EXPECT_LT(report.hash_naive.total.conflicts, report.hash_naive.total.values);
  EXPECT_GT(report.hash_naive.total.conflicts, 0u);
}

TEST(HotProfiler, CountsInASketchWhenTheBudgetIsSmall) {
  const testing::GeneratedRows data = testing::MakeZipfRows(20000, 8, 50000, 1.1, 4);
  ProfileOptions options = SmallSwitch();
  options.sample_fraction = 0.5;
  options.capacity_cells = 200;
  options.counter_memory_budget = 256 * 1024;  // about 3000 counters
  const ProfileReport report = ProfileHotParameters(data.view(), options).report;
  EXPECT_FALSE(report.counter_exact);
  EXPECT_GE(report.coverage_ratio, 0.95);
}

TEST(HotProfiler, RejectsBadOptionsAndHandlesEmptyData) {
  const testing::GeneratedRows data = testing::MakeZipfRows(100, 4, 50, 1.0, 1);
  ProfileOptions options = SmallSwitch();
  options.sample_fraction = 0;
  EXPECT_THROW(ProfileHotParameters(data.view(), options), std::invalid_argument);
  options = SmallSwitch();
  options.capacity_cells = options.layout.capacity() + 1;
  EXPECT_THROW(ProfileHotParameters(data.view(), options), std::invalid_argument);
  options = SmallSwitch();
  options.batch_size = 0;
  EXPECT_THROW(ProfileHotParameters(data.view(), options), std::invalid_argument);

  const testing::GeneratedRows empty;
  const ProfileReport report = ProfileHotParameters(empty.view(), SmallSwitch()).report;
  EXPECT_EQ(report.rows, 0u);
  EXPECT_EQ(report.hot_keys, 0u);
  EXPECT_EQ(report.heat_layout_aware.total.packets, 0u);
}

}  // namespace
}  // namespace libra::hot
