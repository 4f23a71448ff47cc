// `libra demo` on the emulated network (root) and the report fields that say
// where it ran and what it found: network, rate_mbit, speedup and the sweep.
// Without root the emulated test skips with a message, and the demo refuses
// --network emulated in one line (the loopback demo is DemoTest in
// tests/train).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cluster/netns_cluster.h"
#include "common/run_command.h"

namespace libra::cluster {
namespace {

using test_support::RunCommand;

TEST(EmulatedDemoTest, WithoutRootItSaysWhyInOneLine) {
  if (NetnsCluster::HaveRoot()) GTEST_SKIP() << "runs as root: the refusal cannot be seen";
  const auto r = RunCommand(std::string(LIBRA_BIN) + " demo --network emulated --out /tmp/unused");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("needs root"), std::string::npos) << r.output;
}

TEST(EmulatedDemoTest, ShortDemoReportsNetworkRateSpeedupAndTheSweep) {
  if (const std::string why = NetnsCluster::WhyUnavailable(); !why.empty()) GTEST_SKIP() << why;
  const std::filesystem::path out =
      std::filesystem::temp_directory_path() / ("libra-demo-test-" + std::to_string(getpid()));
  const auto r = RunCommand(std::string(LIBRA_BIN) +
                            " demo --network emulated --rows 20000 --epochs 1 --rate-mbit 20 "
                            "--sweep-mbit 20,1000 --run-timeout 120 --out " +
                            out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  std::ifstream in(out / "report.json");
  const auto report = nlohmann::json::parse(in);
  EXPECT_EQ(report["network"], "emulated");
  EXPECT_EQ(report["rate_mbit"].get<double>(), 20.0);
  EXPECT_GT(report["speedup"].get<double>(), 0.0);
  EXPECT_EQ(report["speedup"], report["comparison"]["speedup"]);
  // At 20 Mbit/s the cost model keeps a hot set and the hot path carries it;
  // the model is the plain PS's, to the switch's fixed-point precision.
  EXPECT_GT(report["hot_set"]["hot_keys"].get<uint64_t>(), 0u);
  EXPECT_TRUE(report["hot_set"]["chosen_by_cost"].get<bool>());
  EXPECT_TRUE(report["comparison"]["hot_path_on"].get<bool>()) << r.output;
  EXPECT_TRUE(report["comparison"]["same_quality"].get<bool>()) << report["comparison"].dump();
  EXPECT_GE(report["comparison"]["bound"]["speedup"].get<double>(), 1.0);
  EXPECT_GT(report["comparison"]["switch_packets_in"].get<double>(), 0.0);
  for (const char* run : {"plain", "libra"}) {
    const auto& cluster = report["runs"][run]["cluster"];
    EXPECT_EQ(cluster["status"], 0) << run;
    EXPECT_FALSE(cluster["cpu"].empty()) << run;
    EXPECT_FALSE(cluster["links"].empty()) << run;
    // The run's namespaces are gone.
    const std::string prefix = cluster["switch_namespace"].get<std::string>();
    const std::string cluster_prefix =
        prefix.substr(0, prefix.size() - std::string("switch").size());
    EXPECT_EQ(RunCommand("ip netns list").output.find(cluster_prefix), std::string::npos) << run;
  }
  // The sweep: the main run at 20 Mbit/s, a shorter pair at 1000, where
  // the cost model predicts no hot set pays and the Libra run is plain.
  const auto& sweep = report["sweep"];
  ASSERT_EQ(sweep.size(), 2u) << r.output;
  EXPECT_EQ(sweep[0]["rate_mbit"].get<double>(), 20.0);
  EXPECT_EQ(sweep[1]["rate_mbit"].get<double>(), 1000.0);
  for (const auto& point : sweep) {
    EXPECT_GT(point["speedup"].get<double>(), 0.0) << point.dump();
    EXPECT_GE(point["bound"].get<double>(), 1.0) << point.dump();
    EXPECT_TRUE(point.contains("hot_path_on")) << point.dump();
  }
  EXPECT_TRUE(sweep[0]["hot_path_on"].get<bool>());
  EXPECT_FALSE(sweep[1]["hot_path_on"].get<bool>()) << sweep[1].dump();
  EXPECT_EQ(sweep[1]["hot_keys"], 0);
  EXPECT_TRUE(sweep[1].contains("cost_model"));
  // One line a user can paste.
  EXPECT_NE(r.output.find("libra demo: Libra "), std::string::npos) << r.output;
  // After the plain run every phase says about how long is left.
  EXPECT_NE(r.output.find(" s left] run: Libra"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" s left] sweep: 1000 Mbit/s"), std::string::npos) << r.output;
  std::filesystem::remove_all(out);
}

}  // namespace
}  // namespace libra::cluster
