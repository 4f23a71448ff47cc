// `libra bench overhead` as a user runs it: one configuration per model,
// batch, worker and server count and hot set, each with its ratio and the
// hot path's per-epoch counts; bad options are named.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

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
      // On loopback the cost model keeps every key plain, and says so.
      EXPECT_EQ(c["libra"]["hot_epochs"].get<double>(), 0) << c.dump();
      EXPECT_EQ(c["libra"]["cost_model"]["keys"], 0) << c.dump();
      EXPECT_EQ(c["libra"]["model_fingerprint"], c["plain"]["model_fingerprint"]);
    }
  }
  EXPECT_THAT(run.output, ::testing::HasSubstr("ratio"));
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
