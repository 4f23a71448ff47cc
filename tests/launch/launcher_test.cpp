#include "launch/launcher.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

namespace libra {
namespace {

TEST(LauncherTest, ReportsEachProcessesStatusCpuTimeAndPrefixedOutput) {
  std::vector<ProcessSpec> processes{
      {"busy", {"sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; echo done"}, {}},
      {"idle", {"sh", "-c", "echo \"hello $GREETING\""}, {{"GREETING", "there"}}}};
  std::ostringstream output;
  RunOptions options;
  options.output = &output;
  std::vector<ProcessUsage> usage;
  ASSERT_EQ(RunProcesses(processes, options, &usage), 0);
  ASSERT_EQ(usage.size(), 2u);
  EXPECT_EQ(usage[0].name, "busy");
  EXPECT_EQ(usage[0].status, 0);
  EXPECT_GT(usage[0].user_seconds + usage[0].system_seconds, 0.01);
  EXPECT_GE(usage[0].wall_seconds, usage[0].user_seconds * 0.5);
  EXPECT_NE(output.str().find("[busy] done"), std::string::npos) << output.str();
  EXPECT_NE(output.str().find("[idle] hello there"), std::string::npos) << output.str();
}

TEST(LauncherTest, EveryNodeOfAJobSharesOneRandomSecret) {
  unsetenv("PS_JOB_SECRET");  // a secret in the caller's environment would be inherited
  LocalJob job;
  job.num_servers = 2;
  job.num_workers = 2;
  job.command = {"true"};
  const std::vector<ProcessSpec> first = LocalJobProcesses(job);
  const std::string secret = first.front().env.at("PS_JOB_SECRET");
  EXPECT_EQ(secret.size(), 64u);
  for (const ProcessSpec& p : first) EXPECT_EQ(p.env.at("PS_JOB_SECRET"), secret) << p.name;
  EXPECT_NE(LocalJobProcesses(job).front().env.at("PS_JOB_SECRET"), secret) << "one per job";
  job.env["PS_JOB_SECRET"] = "the caller's";
  EXPECT_EQ(LocalJobProcesses(job).front().env.at("PS_JOB_SECRET"), "the caller's");
  job.env.clear();
  job.secure = false;
  EXPECT_EQ(LocalJobProcesses(job).front().env.count("PS_JOB_SECRET"), 0u);
}

TEST(LauncherTest, TheFirstFailureStopsTheOthers) {
  std::vector<ProcessSpec> processes{{"sleeper", {"sleep", "30"}, {}},
                                     {"failing", {"sh", "-c", "exit 3"}, {}}};
  std::ostringstream output;
  RunOptions options;
  options.output = &output;
  options.timeout_s = 20;
  std::vector<ProcessUsage> usage;
  EXPECT_EQ(RunProcesses(processes, options, &usage), 3);
  ASSERT_EQ(usage.size(), 2u);
  EXPECT_EQ(usage[1].status, 3);
  EXPECT_NE(usage[0].status, 0);  // stopped by SIGTERM
  EXPECT_LT(usage[0].wall_seconds, 10.0);
}

}  // namespace
}  // namespace libra
