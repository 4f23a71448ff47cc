// `libra bench overhead` as a user runs it: one configuration per model,
// batch, worker and server count and hot set, each with its ratio and the
// hot path's per-epoch counts; bad options are named.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/run_command.h"
#include "common/temp_dir.h"

namespace libra {
namespace {

using test_support::CommandResult;

using test_support::RunLibra;

TEST(BenchOverheadCommand, EveryConfigurationHasBothRunsAndTheirRatio) {
  train::testing::TempDir dir;
  const std::string json = dir.File("overhead.json");
  const CommandResult run = RunLibra(
      "bench overhead --rows 3000 --models lr,deepfm --batches 100 "
      "--workers 2 --servers 1,2 --hot-sets auto,500 --out-dir " +
      dir.File("out") + " --json " + json);
  ASSERT_EQ(run.status, 0) << run.output;
  std::ifstream in(json);
  const nlohmann::json report = nlohmann::json::parse(in);
  const nlohmann::json& configs = report.at("configs");
  ASSERT_EQ(configs.size(), 2u * 2u * 2u);  // models x servers x hot sets
  for (const nlohmann::json& c : configs) {
    for (const char* field : {"model", "batch", "workers", "servers", "hot_set", "ratio"}) {
      EXPECT_TRUE(c.contains(field)) << field << " in " << c.dump();
    }
    const double plain = c["plain"]["samples_per_second"];
    const double libra = c["libra"]["samples_per_second"];
    EXPECT_GT(plain, 0);
    EXPECT_DOUBLE_EQ(c["ratio"].get<double>(), libra / plain);
    EXPECT_TRUE(c["libra"]["worker0_ms_per_iteration"].contains("push_ms"));
    if (c["hot_set"] == "500") {
      // A forced set runs the hot path: the switch took DATA and the server
      // read the epoch's sums.
      ASSERT_GT(c["libra"]["hot_epochs"].get<double>(), 0) << c.dump();
      EXPECT_GT(c["libra"]["switch_per_epoch"]["data_packets"].get<double>(), 0);
      EXPECT_GT(c["libra"]["server0_hot_per_epoch"]["collect_packets"].get<double>(), 0);
    } else {
      // On loopback the cost model keeps every key plain, and says so,
      // with what its choice cost: the controller's time after the last
      // JOIN, and worker 0's wait for it.
      EXPECT_EQ(c["libra"]["hot_epochs"].get<double>(), 0) << c.dump();
      EXPECT_EQ(c["libra"]["cost_model"]["keys"], 0) << c.dump();
      const nlohmann::json& sampling = c["libra"].at("sampling");
      EXPECT_GT(sampling.at("decide_ms").get<double>(), 0) << c.dump();
      EXPECT_GE(sampling.at("worker0_install_wait_ms").get<double>(), 0) << c.dump();
      EXPECT_EQ(c["libra"]["model_fingerprint"], c["plain"]["model_fingerprint"]);
    }
  }
  EXPECT_THAT(run.output, ::testing::HasSubstr("ratio"));
}

// Rounds: odd ones run the plain reference last; the summary gives each
// configuration's ratios over the rounds and their median; "plain" is the
// plain PS against itself.
TEST(BenchOverheadCommand, RoundsAlternateThePlainRunsPlaceAndTheSummaryTakesTheirMedian) {
  train::testing::TempDir dir;
  const std::string json = dir.File("overhead.json");
  const std::string out = dir.File("out");
  const CommandResult run = RunLibra(
      "bench overhead --rows 3000 --models lr --batches 100 --workers 2 --servers 1 "
      "--hot-sets plain,500 --repeat 3 --out-dir " +
      out + " --json " + json);
  ASSERT_EQ(run.status, 0) << run.output;
  std::ifstream in(json);
  const nlohmann::json report = nlohmann::json::parse(in);
  ASSERT_EQ(report.at("configs").size(), 3u * 2u);  // rounds x hot sets
  for (const nlohmann::json& c : report["configs"]) {
    if (c["hot_set"] != "plain") continue;
    EXPECT_EQ(c["libra"]["hot_epochs"].get<double>(), 0) << c.dump();
    EXPECT_EQ(c["libra"]["model_fingerprint"], c["plain"]["model_fingerprint"]);
  }
  const auto written = [&](const std::string& name) {
    return std::filesystem::last_write_time(out + "/runs/lr-b100-w2-s1-" + name + ".json");
  };
  EXPECT_LT(written("r0-plain"), written("r0-500")) << "round 0 runs plain first";
  EXPECT_GT(written("r1-plain"), written("r1-500")) << "round 1 runs plain last";
  EXPECT_LT(written("r2-plain"), written("r2-500"));

  const nlohmann::json& summary = report.at("summary");
  ASSERT_EQ(summary.size(), 2u);
  for (const nlohmann::json& s : summary) {
    std::vector<double> ratios;
    for (const nlohmann::json& c : report["configs"]) {
      if (c["hot_set"] == s["hot_set"]) ratios.push_back(c["ratio"].get<double>());
    }
    ASSERT_EQ(s["ratios"].get<std::vector<double>>(), ratios);
    std::sort(ratios.begin(), ratios.end());
    EXPECT_DOUBLE_EQ(s["median_ratio"].get<double>(), ratios[1]);
    EXPECT_DOUBLE_EQ(s["min_ratio"].get<double>(), ratios[0]);
    EXPECT_DOUBLE_EQ(s["max_ratio"].get<double>(), ratios[2]);
  }
  EXPECT_THAT(run.output, ::testing::HasSubstr("ratio over the rounds"));

  // Per hot set, over every configuration and round: the geometric mean of
  // the ratios, and how many configurations' medians reach 0.95.
  const nlohmann::json& hot_sets = report.at("hot_sets");
  ASSERT_EQ(hot_sets.size(), 2u);
  for (const nlohmann::json& h : hot_sets) {
    double log_sum = 0;
    int rounds = 0;
    for (const nlohmann::json& c : report["configs"]) {
      if (c["hot_set"] != h["hot_set"]) continue;
      log_sum += std::log(c["ratio"].get<double>());
      ++rounds;
    }
    EXPECT_EQ(h["rounds"].get<int>(), rounds);
    EXPECT_EQ(h["configurations"].get<int>(), 1);
    EXPECT_NEAR(h["geometric_mean_ratio"].get<double>(), std::exp(log_sum / rounds), 1e-12);
    const bool median_reaches = [&] {
      for (const nlohmann::json& s : summary) {
        if (s["hot_set"] == h["hot_set"]) return s["median_ratio"].get<double>() >= 0.95;
      }
      return false;
    }();
    EXPECT_EQ(h["medians_at_least_0_95"].get<int>(), median_reaches ? 1 : 0);
  }
  EXPECT_THAT(run.output, ::testing::HasSubstr("over every configuration and round"));
}

TEST(BenchOverheadCommand, ABadOptionIsNamed) {
  const CommandResult zero = RunLibra("bench overhead --hot-sets 0");
  EXPECT_EQ(zero.status, 2) << zero.output;
  EXPECT_THAT(zero.output, ::testing::HasSubstr("whole"));
  const CommandResult model = RunLibra("bench overhead --models lasso");
  EXPECT_EQ(model.status, 2) << model.output;
  EXPECT_THAT(model.output, ::testing::HasSubstr("lasso"));
}

}  // namespace
}  // namespace libra
