// `libra bench switchd --dataplane model,xdp` runs both back ends on veths
// between namespaces and writes its report: not a timed test (a fraction
// of a second per round), it checks the run and the report's figures.
// Needs root (and, for xdp, a build with the XDP program and a kernel that
// loads it); skips with the reason otherwise.
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

namespace fs = std::filesystem;
using nlohmann::json;
using test_support::RunCommand;

TEST(SwitchdNetnsBenchTest, BothBackEndsRunInTurnAndWriteTheirReport) {
  if (const std::string why = NetnsCluster::WhyUnavailable(); !why.empty()) {
    GTEST_SKIP() << why;
  }
#if !defined(LIBRA_HAVE_XDP)
  GTEST_SKIP() << "this build has no XDP back end (needs clang, bpftool and libbpf-dev)";
#endif
  const fs::path report =
      fs::temp_directory_path() / ("libra-bench-switchd-" + std::to_string(getpid()) + ".json");
  const auto r = RunCommand(std::string(LIBRA_BIN) +
                            " bench switchd --dataplane model,xdp --rounds 1 --seconds 0.2 "
                            "--workers 4 --slots 4 --generators 2 --json " +
                            report.string());
  if (r.status != 0 && r.output.find("not xdp") != std::string::npos) {
    GTEST_SKIP() << "the XDP program cannot be loaded here: " << r.output;
  }
  ASSERT_EQ(r.status, 0) << r.output;
  std::ifstream in(report);
  const json j = json::parse(in);
  fs::remove(report);
  ASSERT_EQ(j.at("rounds").size(), 2u);
  EXPECT_EQ(j["rounds"][0]["dataplane"], "model");
  EXPECT_EQ(j["rounds"][1]["dataplane"], "xdp");
  for (const char* backend : {"model", "xdp"}) {
    const json& b = j.at("backends").at(backend);
    EXPECT_GT(b.at("packets_acked").get<double>(), 0) << backend;
    // Every DATA packet the switch took was ACKed once or was a resend.
    EXPECT_GE(b.at("switch_data_packets").get<double>(), b["packets_acked"].get<double>());
    EXPECT_GT(b.at("packets_per_second").get<double>(), 0) << backend;
    EXPECT_GT(b.at("packets_per_switch_cpu_second").get<double>(), 0) << backend;
    EXPECT_FALSE(b.at("switch_cpu_source").get<std::string>().empty());
  }
  EXPECT_GT(j["backends"]["xdp"].at("program_runs").get<double>(), 0);
  EXPECT_GT(j.at("xdp_over_model_per_switch_cpu_second").get<double>(), 0);
  // The benchmark's namespaces are gone with it.
  const auto left = RunCommand("ip netns list");
  EXPECT_EQ(left.output.find("librabench-"), std::string::npos) << left.output;
}

}  // namespace
}  // namespace libra::cluster
