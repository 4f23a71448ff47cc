#include "cluster/cluster_run.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace libra::cluster {
namespace {

using nlohmann::json;

// A finished run as RunOnCluster gives it: enough for CompareRuns.
json FinishedRun(double samples_per_second, json iteration_ms) {
  return {{"samples_per_second", samples_per_second},
          {"iteration_ms", std::move(iteration_ms)},
          {"final", {{"test_log_loss", 0.5}, {"test_auc", 0.7}}}};
}

TEST(SteadySpeedupTest, LeavesTheFirstIterationOut) {
  // Libra's first iteration waits for its INSTALL; the rest run at 1.5x.
  const json plain = FinishedRun(1, {900, 750, 750, 750});
  const json libra = FinishedRun(1, {900, 500, 500, 500});
  ASSERT_TRUE(SteadySpeedup(plain, libra).has_value());
  EXPECT_DOUBLE_EQ(*SteadySpeedup(plain, libra), 1.5);
}

TEST(SteadySpeedupTest, NoneWithoutTwoIterationsOnEachSide) {
  EXPECT_FALSE(SteadySpeedup(FinishedRun(1, {900}), FinishedRun(1, {500})).has_value());
  EXPECT_FALSE(
      SteadySpeedup(FinishedRun(1, {900, 700, 700}), FinishedRun(1, {500, 500})).has_value());
  EXPECT_FALSE(SteadySpeedup(json::object(), FinishedRun(1, {500, 500})).has_value());
  EXPECT_FALSE(SteadySpeedup(FinishedRun(1, {900, 0}), FinishedRun(1, {500, 0})).has_value());
}

TEST(CompareRunsTest, GivesTheSteadySpeedupOverTheBoundWithOverlap) {
  json pair;
  pair["plain"] = FinishedRun(1000, {900, 750, 750});
  pair["libra"] = FinishedRun(1200, {900, 500, 500});
  pair["libra"]["hot_overlap"] = 2.0;
  CompareRuns(8, 1, 0.5, 0, pair);
  EXPECT_DOUBLE_EQ(pair["speedup"].get<double>(), 1.2);
  EXPECT_DOUBLE_EQ(pair["steady_speedup"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(pair["steady_over_bound"].get<double>(),
                   1.5 / pair["bound_with_overlap"]["speedup"].get<double>());
  EXPECT_TRUE(pair["same_quality"].get<bool>());
}

TEST(CompareRunsTest, LeavesTheSteadySpeedupOutWithoutIterations) {
  json pair;
  pair["plain"] = FinishedRun(1000, json::array());
  pair["libra"] = FinishedRun(1200, json::array());
  CompareRuns(4, 1, 0.5, 0, pair);
  EXPECT_FALSE(pair.contains("steady_speedup"));
  EXPECT_FALSE(pair.contains("steady_over_bound"));
}

TEST(SummariseRoundsTest, GivesTheMedianAndRangeOfEachFigure) {
  json rounds = json::array();
  for (const double speedup : {1.4, 1.2, 1.5}) {
    json pair;
    pair["plain"] = FinishedRun(1000, {900, 750, 750});
    pair["libra"] = FinishedRun(1000 * speedup, {900, 500, 500});
    CompareRuns(8, 1, 0.5, 0, pair);
    rounds.push_back(RoundOf(pair));
  }
  ASSERT_EQ(rounds.size(), 3u);
  EXPECT_DOUBLE_EQ(rounds[1]["libra_samples_per_second"].get<double>(), 1200);
  const json summary = SummariseRounds(rounds);
  EXPECT_EQ(summary["rounds"].get<int>(), 3);
  EXPECT_DOUBLE_EQ(summary["speedup"]["median"].get<double>(), 1.4);
  EXPECT_DOUBLE_EQ(summary["speedup"]["min"].get<double>(), 1.2);
  EXPECT_DOUBLE_EQ(summary["speedup"]["max"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(summary["steady_speedup"]["median"].get<double>(), 1.5);
}

TEST(SummariseRoundsTest, TakesTheUpperMedianAndSkipsWhatARoundLacks) {
  const json rounds =
      json::array({{{"speedup", 1.0}}, {{"speedup", 2.0}, {"steady_speedup", 3.0}}});
  const json summary = SummariseRounds(rounds);
  EXPECT_DOUBLE_EQ(summary["speedup"]["median"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(summary["steady_speedup"]["min"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(summary["steady_speedup"]["max"].get<double>(), 3.0);
}

}  // namespace
}  // namespace libra::cluster
