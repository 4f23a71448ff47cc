// `libra train` through a switchd that fails (docs/design.md section 2, "Switch
// failure"), with real processes on loopback. The switch kills itself when
// the first DATA of a chosen epoch arrives (`switchd --die-at-epoch`), in
// the middle of that epoch; the job must notice, let the servers sum the hot
// keys (fallback), go back to a switch started again in its place, and end
// with the model of a run whose switch never failed, bit for bit.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/run_command.h"
#include "common/switchd_process.h"

namespace {

using libra::test_support::SwitchdProcess;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A `libra train` job running in the background, its output in a file.
class TrainJob {
 public:
  TrainJob(const std::string& args, const std::string& log) : log_(log) {
    pid_ = fork();
    if (pid_ == 0) {
      const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, 1);
      dup2(fd, 2);
      execl("/bin/sh", "sh", "-c", (std::string(LIBRA_BIN) + " " + args).c_str(), nullptr);
      _exit(127);
    }
  }
  ~TrainJob() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  // Waits until `text` is in the output; the time it took, or a negative
  // number after `seconds`.
  double WaitForOutput(const std::string& text, double seconds) const {
    const auto start = Clock::now();
    while (ReadFile(log_).find(text) == std::string::npos) {
      if (Clock::now() - start > std::chrono::duration<double>(seconds)) return -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return std::chrono::duration<double>(Clock::now() - start).count();
  }

  // Its exit status, or -1 if it still runs after `seconds`.
  int Wait(double seconds) {
    const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
    while (Clock::now() < deadline) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return -1;
  }

  std::string output() const { return ReadFile(log_); }

 private:
  std::string log_;
  pid_t pid_ = -1;
};

// What the servers' reports say about the fallback, summed.
struct FallbackCounts {
  uint64_t fallbacks = 0, resumes = 0, epochs_summed_here = 0, pushes_refused = 0;
};

FallbackCounts CountFallbacks(const nlohmann::json& report) {
  FallbackCounts counts;
  for (const auto& node : report["nodes"]) {
    if (node["role"] != "server" || !node["hot_path"].contains("fallback")) continue;
    const auto& f = node["hot_path"]["fallback"];
    counts.fallbacks += f.value("fallbacks", 0u);
    counts.resumes += f.value("resumes", 0u);
    counts.epochs_summed_here += f.value("epochs_summed_here", 0u);
    counts.pushes_refused += f.value("pushes_refused", 0u);
  }
  return counts;
}

class SwitchFailureTest : public ::testing::Test {
 protected:
  // LR on 8,000 rows, 3 workers x batch 20 for 3 passes: 360 epochs, the
  // first 36 sampled (--sample 0.05: 18 counted, 18 while the controller
  // chooses), the rest on the hot path. Many short
  // epochs, so that the job still runs when a switch started again answers.
  static constexpr const char* kFlags =
      "--model lr --optimizer adagrad --lr 0.1 --epochs 3 --workers 3 --servers 2 --batch 20 "
      "--sample 0.05 --timeout 90 --progress-interval 100";

  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("libra-switch-failure-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    data_ = File("data.libsvm");
    const auto r =
        libra::test_support::RunCommand(std::string(LIBRA_BIN) + " gen-data --out " + data_ +
                                        " --rows 8000 --keys 4000 --fields 8 --seed 5 --threads 1");
    ASSERT_EQ(r.status, 0) << r.output;
    // The model of a run whose switch does not fail.
    SwitchdProcess sw;
    TrainJob job(Args(sw, "clean.json"), File("clean.log"));
    ASSERT_EQ(job.Wait(90), 0) << job.output();
    clean_ = ReadReport("clean.json");
    ASSERT_FALSE(clean_.is_discarded());
    ASSERT_FALSE(clean_.value("model_fingerprint", "").empty());
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static std::string File(const std::string& name) { return (dir_ / name).string(); }
  static std::string Args(const SwitchdProcess& sw, const std::string& report,
                          const std::string& flags = kFlags) {
    return "train --data " + data_ + " " + flags + " --capacity 0 --switch " + sw.data.ToString() +
           " --switch-control " + sw.control_host_port() + " --json " + File(report);
  }
  static nlohmann::json ReadReport(const std::string& name) {
    return nlohmann::json::parse(ReadFile(File(name)), nullptr, false);
  }

  enum class Restart {
    kNever,
    kAtOnce,  // as soon as the switch died: before the job noticed
    kLater,   // 1.5 s later: while the workers still retry the dead one
  };

  // Runs the job with a switch that dies at `epoch` and maybe starts a
  // switch in its place. Checks the model, and returns the report.
  // `flags` and `clean`: another job than the suite's, and its model.
  nlohmann::json RunWithFailure(uint32_t epoch, Restart restart, const std::string& name,
                                const std::string& flags = kFlags,
                                const nlohmann::json* clean = nullptr) {
    if (clean == nullptr) clean = &clean_;
    SwitchdProcess sw({"--die-at-epoch", std::to_string(epoch)});
    TrainJob job(Args(sw, name + ".json", flags), File(name + ".log"));
    EXPECT_GT(sw.WaitForExit(60), 0) << "the switch did not reach epoch " << epoch << "\n"
                                     << job.output();
    const auto died = Clock::now();
    std::unique_ptr<SwitchdProcess> again;
    auto start_again = [&] {
      again = std::make_unique<SwitchdProcess>(std::vector<std::string>{}, sw.data.ToString(),
                                               sw.control_host_port());
    };
    if (restart == Restart::kAtOnce) start_again();
    if (restart == Restart::kLater) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));
      start_again();
    }
    const auto restarted = Clock::now();
    const double found = job.WaitForOutput("found the switch down", 30);
    EXPECT_GE(found, 0) << job.output();
    const double detection = std::chrono::duration<double>(Clock::now() - died).count();
    double recovery = -1;
    if (again) {
      EXPECT_GE(job.WaitForOutput("the hot path resumes at epoch", 30), 0) << job.output();
      recovery = std::chrono::duration<double>(Clock::now() - restarted).count();
    }
    const int status = job.Wait(90);
    const std::string output = job.output();
    EXPECT_EQ(status, 0) << output;
    // Bounded: the senders' retry budget (~4.6 s after the last answer) or a
    // probe after 2 s of silence (3 s budget).
    EXPECT_LT(detection, 10.0) << output;
    std::cout << name << ": switch died at epoch " << epoch << ", found in " << detection << " s";
    if (again) std::cout << ", hot path resumed " << recovery << " s after the restart";
    std::cout << "\n";
    const nlohmann::json report = ReadReport(name + ".json");
    EXPECT_FALSE(report.is_discarded()) << output;
    if (report.is_discarded()) return report;
    EXPECT_EQ(report.value("model_fingerprint", ""), clean->value("model_fingerprint", "?"))
        << output;
    const FallbackCounts counts = CountFallbacks(report);
    EXPECT_EQ(counts.fallbacks, 2u) << "each server falls back once";
    EXPECT_GT(counts.epochs_summed_here, 0u);
    EXPECT_EQ(counts.pushes_refused, 0u);
    EXPECT_EQ(counts.resumes, again ? 2u : 0u);
    return report;
  }

  static inline fs::path dir_;
  static inline std::string data_;
  static inline nlohmann::json clean_;
};

TEST_F(SwitchFailureTest, AKilledSwitchLeavesTheServersSummingAndTheModelUnchanged) {
  RunWithFailure(100, Restart::kNever, "killed");
}

// The same at epochs drawn from a few seeds (the hot path runs epochs 36-359).
TEST_F(SwitchFailureTest, AKilledSwitchAtRandomEpochsLeavesTheModelUnchanged) {
  for (const uint32_t seed : {1u, 2u, 3u}) {
    std::mt19937 rng(seed);
    const uint32_t epoch = std::uniform_int_distribution<uint32_t>(37, 350)(rng);
    RunWithFailure(epoch, Restart::kNever, "random-" + std::to_string(seed));
  }
}

// A switch started again in place of the dead one, at once or 1.5 s later,
// with empty registers and the failed epoch half sent: the workers' resent
// DATA meets a switch without the job, the job falls back, and the
// controller, finding the switch up, installs the job again under a new id
// (nothing of the failed incarnation can reach the new registers) and the
// hot path resumes at an epoch boundary. (On loopback the fallback runs the
// rest of this job in well under a second, so a switch started after the
// job fell back would rarely find it still running.)
TEST_F(SwitchFailureTest, ASwitchStartedAgainAtOnceTakesTheHotPathBack) {
  RunWithFailure(40, Restart::kAtOnce, "restart-at-once");
}

TEST_F(SwitchFailureTest, ASwitchStartedAgainLaterTakesTheHotPathBack) {
  RunWithFailure(40, Restart::kLater, "restart-later");
}

// Keys of several values (a factorization machine: weight and a
// 4-dimensional embedding, 5 cells a key) through the fallback and back.
TEST_F(SwitchFailureTest, AFactorizationMachineJobComesThroughTheSameWay) {
  const std::string flags =
      "--model fm --embedding-dim 4 --optimizer ftrl --lr 0.05 --epochs 3 --workers 3 "
      "--servers 2 --batch 20 --sample 0.05 --timeout 90 --progress-interval 100";
  SwitchdProcess sw;
  TrainJob clean_job(Args(sw, "fm-clean.json", flags), File("fm-clean.log"));
  ASSERT_EQ(clean_job.Wait(90), 0) << clean_job.output();
  const nlohmann::json clean = ReadReport("fm-clean.json");
  ASSERT_FALSE(clean.is_discarded());
  RunWithFailure(100, Restart::kAtOnce, "fm-restart", flags, &clean);
}

// A switch that is up (its control port answers, it takes the job) but
// drops every packet: the job falls back, the controller's resumes fail
// again (less and less often), and the model is still the same.
TEST_F(SwitchFailureTest, ASwitchThatDropsEverythingLeavesTheModelUnchanged) {
  SwitchdProcess sw({"--drop-rate", "1", "--drop-seed", "3"});
  TrainJob job(Args(sw, "drop-all.json"), File("drop-all.log"));
  const int status = job.Wait(90);
  const std::string output = job.output();
  ASSERT_EQ(status, 0) << output;
  const nlohmann::json report = ReadReport("drop-all.json");
  ASSERT_FALSE(report.is_discarded()) << output;
  EXPECT_EQ(report.value("model_fingerprint", ""), clean_.value("model_fingerprint", "?"));
  const FallbackCounts counts = CountFallbacks(report);
  EXPECT_GE(counts.fallbacks, 2u);
  EXPECT_EQ(counts.pushes_refused, 0u);
  EXPECT_NE(output.find("found the switch down"), std::string::npos) << output;
  std::cout << "a switch dropping everything: " << counts.fallbacks / 2 << " fallback(s), "
            << counts.resumes / 2 << " resume(s)\n";
}

}  // namespace
