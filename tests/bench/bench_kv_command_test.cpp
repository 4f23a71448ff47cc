// `libra bench kv` as a user runs it: with --switch it also runs the same
// calls through a local switchd (here the whole switch forced: every key
// hot), checks the sums the pulls return (the worker node fails otherwise)
// and reports each median against the TCP run's; a bad capacity is named.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "common/run_command.h"

namespace libra {
namespace {

using test_support::CommandResult;

using test_support::RunLibra;

TEST(BenchKvCommand, ThroughTheSwitchEveryOperationIsReportedAgainstTcp) {
  const std::string json = ::testing::TempDir() + "bench_kv_" + std::to_string(getpid()) + ".json";
  const CommandResult run = RunLibra("bench kv --keys 3000 --repeat 3 --switch 0 --json " + json);
  ASSERT_EQ(run.status, 0) << run.output;
  std::ifstream in(json);
  const nlohmann::json report = nlohmann::json::parse(in);
  ASSERT_TRUE(report.contains("switch_0")) << report.dump();
  const nlohmann::json& through = report.at("switch_0");
  EXPECT_EQ(through.at("capacity"), "0");
  for (const char* op : {"push", "pull", "pushpull"}) {
    const double tcp = report.at("tcp").at(op).at("median_ms").get<double>();
    const double ms = through.at(op).at("median_ms").get<double>();
    EXPECT_GT(ms, 0.0) << op;
    EXPECT_DOUBLE_EQ(through.at(op).at("ratio_to_tcp").get<double>(), ms / tcp) << op;
  }
  EXPECT_THAT(run.output, ::testing::HasSubstr("on the hot path"));
  std::remove(json.c_str());
}

TEST(BenchKvCommand, ABadCapacityIsNamed) {
  const CommandResult run = RunLibra("bench kv --keys 10 --switch lots");
  EXPECT_NE(run.status, 0);
  EXPECT_NE(run.status, 134) << "an abort";
  EXPECT_THAT(run.output, ::testing::HasSubstr("--switch"));
}

}  // namespace
}  // namespace libra
