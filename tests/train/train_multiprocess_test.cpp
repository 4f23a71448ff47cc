// `libra train` and `libra demo` as a user runs them: real scheduler, server
// and worker processes on loopback.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "temp_dir.h"

namespace libra::train {
namespace {

struct CommandResult {
  int status = -1;
  std::string output;
};

CommandResult RunLibra(const std::string& args) {
  CommandResult result;
  FILE* pipe = popen((std::string(LIBRA_BIN) + " " + args + " 2>&1").c_str(), "r");
  if (!pipe) return result;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) result.output.append(buf, n);
  const int status = pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

nlohmann::json ReadJson(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
}

// A small learnable data set, made once for the suite (in a directory of
// its own: TempDir names itself after the running test).
class TrainJobTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::filesystem::temp_directory_path() /
           ("libra-train-job-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    data_ = File("data.libsvm");
    const CommandResult r = RunLibra("gen-data --out " + data_ +
                                     " --rows 8000 --keys 4000 --fields 8 --seed 5 --threads 1");
    ASSERT_EQ(r.status, 0) << r.output;
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }

  static std::string File(const std::string& name) { return (dir_ / name).string(); }

  // Trains and returns the report.
  nlohmann::json Train(const std::string& flags, const std::string& report_name) {
    const std::string report = File(report_name);
    const CommandResult r =
        RunLibra("train --data " + data_ + " --timeout 60 --json " + report + " " + flags);
    EXPECT_EQ(r.status, 0) << r.output;
    return ReadJson(report);
  }

  static std::filesystem::path dir_;
  static std::string data_;
};

std::filesystem::path TrainJobTest::dir_;
std::string TrainJobTest::data_;

TEST_F(TrainJobTest, FourWorkersMatchOneWorkerWithTheSameTotalBatch) {
  const std::string common = "--model lr --optimizer adagrad --lr 0.1 --epochs 2 ";
  const nlohmann::json one = Train(common + "--workers 1 --servers 1 --batch 200", "one.json");
  const nlohmann::json four = Train(common + "--workers 4 --servers 2 --batch 50", "four.json");
  ASSERT_FALSE(one.is_discarded());
  ASSERT_FALSE(four.is_discarded());
  const double loss_one = one["final"]["test_log_loss"];
  const double loss_four = four["final"]["test_log_loss"];
  // Same rows per iteration, same update up to float summation order.
  EXPECT_NEAR(loss_four, loss_one, 0.001 * loss_one);
  // And the model learnt something: better than predicting the base rate.
  EXPECT_LT(loss_one, 0.69);
  EXPECT_GT(double(one["final"]["test_auc"]), 0.6);
  EXPECT_EQ(four["config"]["total_batch"], 200);
  EXPECT_EQ(four["data"]["iterations_per_epoch"], one["data"]["iterations_per_epoch"]);
}

TEST_F(TrainJobTest, TheSameSeedGivesTheSameModelBitForBit) {
  const std::string flags =
      "--model fm --optimizer ftrl --lr 0.05 --l1 0.001 --epochs 1 --workers 3 --servers 2 "
      "--batch 100 --seed 7";
  const nlohmann::json a = Train(flags, "a.json");
  const nlohmann::json b = Train(flags, "b.json");
  ASSERT_FALSE(a.is_discarded());
  ASSERT_FALSE(b.is_discarded());
  EXPECT_EQ(a["model_fingerprint"], b["model_fingerprint"]);
  EXPECT_EQ(a["final"]["test_log_loss"].dump(), b["final"]["test_log_loss"].dump());
  const nlohmann::json c = Train(
      "--model fm --optimizer ftrl --lr 0.05 --l1 0.001 --epochs 1 "
      "--workers 3 --servers 2 --batch 100 --seed 8",
      "c.json");
  EXPECT_NE(a["model_fingerprint"], c["model_fingerprint"]) << "the seed is not used";
}

TEST_F(TrainJobTest, ReportsTrafficOfEveryNodeAndIterationTimings) {
  const nlohmann::json r =
      Train("--model deepfm --optimizer sgd --lr 0.05 --workers 2 --servers 2 --batch 200",
            "deepfm.json");
  ASSERT_FALSE(r.is_discarded());
  int servers = 0, workers = 0;
  for (const auto& node : r["nodes"]) {
    if (node["role"] == "server") {
      ++servers;
      EXPECT_GT(node["bytes_received"].get<uint64_t>(), 0u);
      EXPECT_GT(node["bytes_sent"].get<uint64_t>(), 0u);
      EXPECT_EQ(node["rounds"], r["data"]["iterations_per_epoch"]);
      EXPECT_EQ(node["malformed_pushes"], 0);
    }
    if (node["role"] == "worker") ++workers;
  }
  EXPECT_EQ(servers, 2);
  EXPECT_EQ(workers, 2);
  EXPECT_EQ(r["iterations"]["count"], r["data"]["iterations_per_epoch"]);
  EXPECT_GT(r["throughput"]["samples_per_second"].get<double>(), 0.0);
  EXPECT_GT(r["final"]["test_auc"].get<double>(), 0.5);
}

TEST_F(TrainJobTest, ABadDataFileIsNamed) {
  const std::string bad = File("bad.libsvm");
  std::ofstream(bad) << "1 3:1 4:1\n0 5:x\n";
  const CommandResult r = RunLibra("train --data " + bad + " --json " + File("bad.json"));
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find(bad + ":2"), std::string::npos) << r.output;
  const CommandResult missing = RunLibra("train --data " + File("nope"));
  EXPECT_NE(missing.status, 0);
  EXPECT_NE(missing.output.find("nope"), std::string::npos) << missing.output;
}

TEST(DemoTest, RunsOnATinyDataSetAndWritesASaneReport) {
  testing::TempDir dir;
  const CommandResult r =
      RunLibra("demo --rows 3000 --epochs 1 --workers 2 --out " + dir.File("demo"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("hot path not yet available: running the plain parameter server"),
            std::string::npos)
      << r.output;
  const nlohmann::json report = ReadJson(dir.File("demo/report.json"));
  ASSERT_FALSE(report.is_discarded()) << r.output;
  EXPECT_EQ(report["data"]["rows"], 3000);
  EXPECT_GT(report["throughput"]["samples_per_second"].get<double>(), 0.0);
  const double loss = report["final"]["test_log_loss"];
  EXPECT_GT(loss, 0.0);
  EXPECT_LT(loss, 1.0);
  EXPECT_GT(report["final"]["test_auc"].get<double>(), 0.5);
  EXPECT_EQ(report["demo"]["hot_path"], false);
  EXPECT_GT(report["nodes"][1]["bytes_received"].get<uint64_t>(), 0u);  // the server
  // A second run reuses the data set.
  const CommandResult again =
      RunLibra("demo --rows 3000 --epochs 1 --workers 2 --out " + dir.File("demo"));
  EXPECT_EQ(again.status, 0) << again.output;
  EXPECT_NE(again.output.find("using the cached data set"), std::string::npos) << again.output;
}

}  // namespace
}  // namespace libra::train
