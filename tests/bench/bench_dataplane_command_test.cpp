// `libra bench dataplane` as a user runs it: each kind of traffic writes a
// JSON report whose counts add up, and a bad --traffic is named.
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

TEST(BenchDataplaneCommand, EachTrafficWritesAReportWhoseCountsAddUp) {
  for (const std::string traffic : {"one-row", "scattered", "pushes"}) {
    const std::string json =
        ::testing::TempDir() + "bench_dataplane_" + traffic + std::to_string(getpid()) + ".json";
    const CommandResult run = RunLibra(
        "bench dataplane --seconds 0.05 --workers 3 --cells 256 --batch 20 "
        "--traffic " +
        traffic + " --json " + json);
    ASSERT_EQ(run.status, 0) << run.output;
    EXPECT_THAT(run.output, ::testing::HasSubstr("packets per CPU second"));
    std::ifstream in(json);
    const nlohmann::json report = nlohmann::json::parse(in);
    EXPECT_EQ(report.at("traffic"), traffic);
    EXPECT_EQ(report.at("workers"), 3);
    const auto packets = report.at("packets").get<std::uint64_t>();
    const auto values = report.at("values").get<std::uint64_t>();
    EXPECT_GT(packets, 0u) << traffic;
    EXPECT_LE(values, packets * 32) << traffic;
    EXPECT_GT(values, packets) << traffic;
    if (traffic == "one-row") {
      EXPECT_EQ(report.at("one_row_packets").get<std::uint64_t>(), packets);
      EXPECT_EQ(values, packets * 32);
    }
    if (traffic == "scattered") {
      EXPECT_EQ(report.at("one_row_packets").get<std::uint64_t>(), 0u);
    }
    if (traffic == "pushes") {
      const nlohmann::json& pushes = report.at("pushes");
      EXPECT_EQ(pushes.at("batch"), 20);
      EXPECT_GT(pushes.at("values_per_packet").get<double>(), 1.0);
      EXPECT_LE(pushes.at("values_per_packet").get<double>(), 32.0);
      EXPECT_GT(pushes.at("cells_per_epoch").get<double>(), 0.0);
    } else {
      EXPECT_FALSE(report.contains("pushes"));
    }
    std::remove(json.c_str());
  }
}

TEST(BenchDataplaneCommand, AnUnknownTrafficIsNamed) {
  const CommandResult run = RunLibra("bench dataplane --seconds 0.05 --traffic dense");
  EXPECT_NE(run.status, 0);
  EXPECT_THAT(run.output, ::testing::HasSubstr("--traffic"));
}

}  // namespace
}  // namespace libra
