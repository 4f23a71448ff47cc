// `libra train` when things go wrong, with real processes on loopback:
// a job stopped abruptly and resumed from its checkpoints ends with the
// model of an uninterrupted run, bit for bit; a killed server or worker
// stops the job quickly, naming it, with no process left behind.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "common/run_command.h"
#include "launch/launcher.h"

namespace libra::train {
namespace {

using libra::test_support::CommandResult;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

using libra::test_support::RunLibra;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Fingerprint(const std::string& report_path) {
  std::ifstream in(report_path);
  const nlohmann::json report = nlohmann::json::parse(in, nullptr, false);
  return report.is_discarded() ? "" : report.value("model_fingerprint", "");
}

class TrainRecoveryTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("libra-train-recovery-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    data_ = File("data.libsvm");
    const CommandResult r = RunLibra("gen-data --out " + data_ +
                                     " --rows 4000 --keys 3000 --fields 8 --seed 9 --threads 1");
    ASSERT_EQ(r.status, 0) << r.output;
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  static std::string File(const std::string& name) { return (dir_ / name).string(); }

  CommandResult Train(const std::string& flags, const std::string& report) {
    return RunLibra("train --data " + data_ + " --timeout 60 --progress-interval 100 --json " +
                    File(report) + " " + flags);
  }

  // Trains `flags` once without a break, and once stopped abruptly after
  // iteration `stop` with a checkpoint every `every` iterations, then
  // resumed; both must end with the same model. Returns the resumed run's
  // output.
  std::string ExpectResumeGivesTheSameModel(const std::string& name, const std::string& flags,
                                            int every, int stop, int expected_resume) {
    const CommandResult whole = Train(flags, name + "-whole.json");
    EXPECT_EQ(whole.status, 0) << whole.output;
    const std::string ckpt = File(name + "-ckpt");
    const std::string ckpt_flags =
        flags + " --checkpoint-dir " + ckpt + " --checkpoint-every " + std::to_string(every);
    const CommandResult crashed =
        Train(ckpt_flags + " --stop-after-iteration " + std::to_string(stop), name + "-x.json");
    EXPECT_NE(crashed.status, 0) << crashed.output;
    EXPECT_NE(crashed.output.find("stopping abruptly after iteration " + std::to_string(stop)),
              std::string::npos)
        << crashed.output;
    const CommandResult resumed = Train(ckpt_flags + " --resume", name + "-resumed.json");
    EXPECT_EQ(resumed.status, 0) << resumed.output;
    EXPECT_NE(resumed.output.find("resuming after iteration " + std::to_string(expected_resume)),
              std::string::npos)
        << resumed.output;
    const std::string expected = Fingerprint(File(name + "-whole.json"));
    EXPECT_FALSE(expected.empty());
    EXPECT_EQ(Fingerprint(File(name + "-resumed.json")), expected) << resumed.output;
    return resumed.output;
  }

  static fs::path dir_;
  static std::string data_;
};

fs::path TrainRecoveryTest::dir_;
std::string TrainRecoveryTest::data_;

// 3600 training rows, 3 workers x batch 50: 24 iterations per epoch.
TEST_F(TrainRecoveryTest, ResumedLogisticRegressionEndsWithTheUninterruptedModel) {
  const std::string flags =
      "--model lr --optimizer adagrad --lr 0.1 --l2 0.001 --epochs 2 --workers 3 --servers 2 "
      "--batch 50";
  // Stopped in epoch 2 after iteration 33: the checkpoints of 20 and 30 are
  // kept, the job resumes after 30.
  ExpectResumeGivesTheSameModel("lr", flags, 10, 33, 30);
  for (int server = 0; server < 2; ++server) {
    std::vector<std::string> kept;
    for (const auto& entry : fs::directory_iterator(File("lr-ckpt"))) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("server-" + std::to_string(server) + "-", 0) == 0) kept.push_back(name);
    }
    std::sort(kept.begin(), kept.end());
    // After the resumed run (which wrote 40) the last two remain.
    EXPECT_EQ(kept, (std::vector<std::string>{
                        "server-" + std::to_string(server) + "-iter-000000000030.ckpt",
                        "server-" + std::to_string(server) + "-iter-000000000040.ckpt"}));
  }
}

TEST_F(TrainRecoveryTest, ResumedFactorizationMachineWithFtrlEndsWithTheUninterruptedModel) {
  ExpectResumeGivesTheSameModel(
      "fm",
      "--model fm --embedding-dim 4 --optimizer ftrl --lr 0.05 --l1 0.001 --epochs 2 "
      "--workers 2 --servers 2 --batch 60",
      7, 40, 35);
}

TEST_F(TrainRecoveryTest, ResumedDeepFmEndsWithTheUninterruptedModel) {
  // Stopped right after a checkpoint at an epoch boundary (1800 rows per
  // worker / 100 = 18 iterations per epoch).
  ExpectResumeGivesTheSameModel("deepfm",
                                "--model deepfm --embedding-dim 4 --optimizer sgd --lr 0.05 "
                                "--epochs 2 --workers 2 --servers 1 --batch 100",
                                9, 18, 18);
}

TEST_F(TrainRecoveryTest, AServerMissingTheNewestCheckpointMakesAllResumeFromTheOlderOne) {
  const std::string flags =
      "--model lr --optimizer ftrl --lr 0.1 --epochs 1 --workers 2 --servers 2 --batch 40";
  const CommandResult whole = Train(flags, "older-whole.json");
  ASSERT_EQ(whole.status, 0) << whole.output;
  const std::string ckpt = File("older-ckpt");
  const std::string ckpt_flags = flags + " --checkpoint-dir " + ckpt + " --checkpoint-every 10";
  EXPECT_NE(Train(ckpt_flags + " --stop-after-iteration 25", "older-x.json").status, 0);
  // As if server 1 crashed while writing iteration 20.
  ASSERT_TRUE(fs::remove(ckpt + "/server-1-iter-000000000020.ckpt"));
  const CommandResult resumed = Train(ckpt_flags + " --resume", "older-resumed.json");
  ASSERT_EQ(resumed.status, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("resuming after iteration 10"), std::string::npos)
      << resumed.output;
  EXPECT_EQ(Fingerprint(File("older-resumed.json")), Fingerprint(File("older-whole.json")));
}

TEST_F(TrainRecoveryTest, ADamagedCheckpointStopsTheResumeNamingTheFile) {
  const std::string ckpt = File("damaged-ckpt");
  const std::string flags =
      "--model lr --epochs 1 --workers 2 --servers 1 --batch 40 --checkpoint-dir " + ckpt +
      " --checkpoint-every 5";
  EXPECT_NE(Train(flags + " --stop-after-iteration 12", "damaged-x.json").status, 0);
  const std::string file = ckpt + "/server-0-iter-000000000010.ckpt";
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(70);
    f.put('\x55');
  }
  const CommandResult resumed = Train(flags + " --resume", "damaged.json");
  EXPECT_NE(resumed.status, 0);
  EXPECT_NE(resumed.output.find(file + ": damaged"), std::string::npos) << resumed.output;
  // Another job's settings (batch) cannot resume from the intact one either.
  ASSERT_TRUE(fs::remove(file));
  const CommandResult other =
      Train("--model lr --epochs 1 --workers 2 --servers 1 --batch 41 --checkpoint-dir " + ckpt +
                " --resume",
            "other.json");
  EXPECT_NE(other.status, 0);
  EXPECT_NE(other.output.find("other settings"), std::string::npos) << other.output;
}

TEST_F(TrainRecoveryTest, CheckpointFlagsThatDoNotGoTogetherAreNamed) {
  const CommandResult no_dir = Train("--checkpoint-every 5", "flags1.json");
  EXPECT_NE(no_dir.status, 0);
  EXPECT_NE(no_dir.output.find("--checkpoint-dir"), std::string::npos) << no_dir.output;
  const CommandResult resume = Train("--resume", "flags2.json");
  EXPECT_NE(resume.status, 0);
  EXPECT_NE(resume.output.find("--checkpoint-dir"), std::string::npos) << resume.output;
}

// With Libra's hot path: a checkpoint of iteration i holds the switch's
// epoch i - 1 as well (each server waits until its hot path applied it), and
// the resumed job runs the hot path with the saved INSTALL (hot set, owners,
// scale) from the resumed epoch on: the same model, bit for bit.
TEST_F(TrainRecoveryTest, ResumedLibraJobEndsWithTheUninterruptedModel) {
  const std::string flags =
      "--model lr --optimizer adagrad --lr 0.1 --epochs 2 --workers 3 --servers 2 --batch 50 "
      "--libra --capacity 0 --sample 0.1";
  const std::string output = ExpectResumeGivesTheSameModel("libra", flags, 10, 33, 30);
  EXPECT_NE(output.find("resuming with the hot path of"), std::string::npos) << output;
  EXPECT_NE(output.find("on the hot path from epoch 30 "), std::string::npos) << output;
}

// ---- node failure ----

// A process started by the test with its output in a file.
struct Started {
  pid_t pid = -1;
  std::string log;
};

Started Start(const std::vector<std::string>& argv, const std::string& log,
              const std::map<std::string, std::string>& env = {}) {
  Started s{-1, log};
  s.pid = fork();
  if (s.pid == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  return s;
}

// Waits up to `seconds` for `pid`; its exit status (128 + signal), or -1.
int WaitFor(pid_t pid, double seconds) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < deadline) {
    int status;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return -1;
}

bool Alive(pid_t pid) {
  const std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  if (stat.empty()) return false;
  const size_t close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
}

// The node processes the launcher `parent` started: "server 0" -> pid ...
std::map<std::string, pid_t> NodesOf(pid_t parent) {
  std::map<std::string, pid_t> nodes;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = ReadFile("/proc/" + name + "/stat");
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(stat.substr(close + 2));
    char state;
    pid_t ppid;
    fields >> state >> ppid;
    if (ppid != parent) continue;
    std::string environ = ReadFile("/proc/" + name + "/environ");
    std::map<std::string, std::string> env;
    std::istringstream vars(environ);
    for (std::string var; std::getline(vars, var, '\0');) {
      const size_t eq = var.find('=');
      if (eq != std::string::npos) env[var.substr(0, eq)] = var.substr(eq + 1);
    }
    const std::string role = env["DMLC_ROLE"];
    if (role.empty()) {
      // The switchd a --libra job starts for itself.
      if (ReadFile("/proc/" + name + "/cmdline").find("switchd") != std::string::npos) {
        nodes["switchd"] = std::stoi(name);
      }
      continue;
    }
    nodes[role == "scheduler" ? role : role + " " + env["LIBRA_RANK"]] = std::stoi(name);
  }
  return nodes;
}

// Starts a long `libra train` job (1 scheduler, 2 servers, 2 workers, and a
// switchd with `libra`), kills `victim` once training runs, and checks that
// the job ends within a bound, failing and naming the victim, and leaves no
// process behind.
// Kills `victim` of a running `libra train` job and checks that the job stops
// within `bound_s` seconds with `message` in its output and no node left.
void ExpectKilledNodeStopsTheJob(const std::string& data, const std::string& victim,
                                 const std::string& dir, bool libra, const std::string& message,
                                 double bound_s, const std::string& running = "iteration") {
  std::string log = dir + "/kill-" + (libra ? "libra-" : "") + victim + ".log";
  std::replace(log.begin(), log.end(), ' ', '-');
  std::vector<std::string> argv{
      LIBRA_BIN, "train",     "--data",   data,        "--model",
      "lr",      "--workers", "2",        "--servers", "2",
      "--batch", "5",         "--epochs", "100",       "--progress-interval",
      "0.2",     "--timeout", "120",      "--json",    dir + "/kill.json"};
  if (libra) argv.insert(argv.end(), {"--libra", "--capacity", "0", "--sample", "0.001"});
  const Started job = Start(argv, log);
  ASSERT_GT(job.pid, 0);
  // Training runs once worker 0 prints progress (or `running` says more).
  auto deadline = Clock::now() + std::chrono::seconds(60);
  while (ReadFile(log).find(running) == std::string::npos && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_NE(ReadFile(log).find(running), std::string::npos) << ReadFile(log);
  const std::map<std::string, pid_t> nodes = NodesOf(job.pid);
  ASSERT_EQ(nodes.size(), libra ? 6u : 5u) << ReadFile(log);
  ASSERT_TRUE(nodes.count(victim)) << victim;

  const auto killed_at = Clock::now();
  ASSERT_EQ(kill(nodes.at(victim), SIGKILL), 0);
  const int status = WaitFor(job.pid, static_cast<int>(bound_s) + 5);
  const double seconds = std::chrono::duration<double>(Clock::now() - killed_at).count();
  if (status < 0) kill(job.pid, SIGKILL);
  const std::string output = ReadFile(log);
  EXPECT_GT(status, 0) << output;
  EXPECT_LT(seconds, bound_s) << output;
  EXPECT_NE(output.find(message), std::string::npos) << output;
  for (const auto& [name, pid] : nodes) {
    EXPECT_FALSE(Alive(pid)) << name << " (pid " << pid << ") is still running";
  }
  std::cout << victim << " killed: job stopped in " << seconds << " s\n";
}

// The launcher sees the death at once; the others stop within its 3 s
// grace period.
TEST_F(TrainRecoveryTest, AKilledServerStopsTheJobNamingIt) {
  ExpectKilledNodeStopsTheJob(data_, "server 1", dir_.string(), false,
                              "server 1 exited with status 137", 10.0);
}

TEST_F(TrainRecoveryTest, AKilledWorkerStopsTheJobNamingIt) {
  ExpectKilledNodeStopsTheJob(data_, "worker 1", dir_.string(), false,
                              "worker 1 exited with status 137", 10.0);
}

// With Libra on, the job's own switchd must go too.
TEST_F(TrainRecoveryTest, AKilledServerOfALibraJobLeavesNoSwitchBehind) {
  ExpectKilledNodeStopsTheJob(data_, "server 0", dir_.string(), true,
                              "server 0 exited with status 137", 10.0);
}

// The switch of a `--libra` job is not a node: killing it must not stop the
// job. The workers find it dead (retry budget, or a probe after 2 s of
// silence), the servers sum the hot keys themselves, and the job finishes,
// with no process left.
TEST_F(TrainRecoveryTest, AKilledSwitchOfALibraJobLeavesTheServersSummingAndTheJobFinishes) {
  const std::string log = File("kill-libra-switchd.log");
  const Started job =
      Start({LIBRA_BIN, "train",     "--data",   data_,       "--model",
             "lr",      "--workers", "2",        "--servers", "2",
             "--batch", "20",        "--epochs", "2",         "--progress-interval",
             "0.2",     "--timeout", "120",      "--libra",   "--capacity",
             "0",       "--sample",  "0.05",     "--json",    File("kill-switchd.json")},
            log);
  ASSERT_GT(job.pid, 0);
  auto deadline = Clock::now() + std::chrono::seconds(60);
  while (ReadFile(log).find("on the hot path from epoch") == std::string::npos &&
         Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_NE(ReadFile(log).find("on the hot path from epoch"), std::string::npos) << ReadFile(log);
  const std::map<std::string, pid_t> nodes = NodesOf(job.pid);
  ASSERT_EQ(nodes.size(), 6u) << ReadFile(log);
  ASSERT_TRUE(nodes.count("switchd"));
  ASSERT_EQ(kill(nodes.at("switchd"), SIGKILL), 0);
  const int status = WaitFor(job.pid, 60);
  if (status < 0) kill(job.pid, SIGKILL);
  const std::string output = ReadFile(log);
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find("found the switch down"), std::string::npos) << output;
  EXPECT_NE(output.find("sums the hot keys itself"), std::string::npos) << output;
  for (const auto& [name, pid] : nodes) {
    EXPECT_FALSE(Alive(pid)) << name << " (pid " << pid << ") is still running";
  }
}

// Across machines there is no launcher: the nodes are started by hand, and
// the scheduler's heartbeats find the dead node. Killing a server while the
// workers wait for their pushes must still stop every node, naming it.
TEST_F(TrainRecoveryTest, AKilledServerOfAHandStartedJobIsFoundByHeartbeats) {
  std::map<std::string, std::string> env{{"DMLC_NUM_SERVER", "1"},
                                         {"DMLC_NUM_WORKER", "2"},
                                         {"DMLC_PS_ROOT_URI", "127.0.0.1"},
                                         {"PS_HEARTBEAT_INTERVAL", "1"},
                                         {"PS_HEARTBEAT_TIMEOUT", "2"}};
  env["DMLC_PS_ROOT_PORT"] = std::to_string(libra::FindFreePort());
  const std::vector<std::string> command{LIBRA_BIN,
                                         "train",
                                         "--data",
                                         data_,
                                         "--model",
                                         "lr",
                                         "--batch",
                                         "5",
                                         "--epochs",
                                         "100",
                                         "--progress-interval",
                                         "0.2"};
  std::map<std::string, Started> nodes;
  // Whatever fails below, no node outlives the test (the job runs 100 epochs).
  struct KillAll {
    std::map<std::string, Started>& nodes;
    ~KillAll() {
      for (auto& [name, node] : nodes) {
        if (Alive(node.pid)) kill(node.pid, SIGKILL);
        WaitFor(node.pid, 1);
      }
    }
  } kill_all{nodes};
  auto all_logs = [&nodes] {
    std::string logs;
    for (const auto& [name, node] : nodes) logs += "--- " + name + ":\n" + ReadFile(node.log);
    return logs;
  };
  for (const auto& [name, role, rank] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"scheduler", "scheduler", ""},
           {"server 0", "server", "0"},
           {"worker 0", "worker", "0"},
           {"worker 1", "worker", "1"}}) {
    auto e = env;
    e["DMLC_ROLE"] = role;
    if (!rank.empty()) e["LIBRA_RANK"] = rank;
    nodes[name] = Start(command, File("hb-" + role + rank + ".log"), e);
  }
  auto deadline = Clock::now() + std::chrono::seconds(60);
  while (ReadFile(nodes["worker 0"].log).find("iteration") == std::string::npos &&
         Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_NE(ReadFile(nodes["worker 0"].log).find("iteration"), std::string::npos) << all_logs();
  const auto killed_at = Clock::now();
  kill(nodes["server 0"].pid, SIGKILL);
  WaitFor(nodes["server 0"].pid, 5);
  std::map<std::string, int> status;
  for (const char* name : {"scheduler", "worker 0", "worker 1"}) {
    status[name] = WaitFor(nodes[name].pid, 15);
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - killed_at).count();
  for (const auto& [name, s] : status) EXPECT_EQ(s, 1) << name << ": " << ReadFile(nodes[name].log);
  // Timeout 2 s, heartbeats every 1 s, checked every 0.5 s.
  EXPECT_LT(seconds, 10.0);
  const std::string scheduler_log = ReadFile(nodes["scheduler"].log);
  EXPECT_NE(scheduler_log.find("server 0"), std::string::npos) << scheduler_log;
  EXPECT_NE(scheduler_log.find("sent no heartbeat"), std::string::npos) << scheduler_log;
  for (const char* name : {"worker 0", "worker 1"}) {
    EXPECT_NE(ReadFile(nodes[name].log).find("server 0"), std::string::npos)
        << ReadFile(nodes[name].log);
  }
  std::cout << "server 0 of a hand-started job killed: all nodes stopped in " << seconds << " s\n";
}

}  // namespace
}  // namespace libra::train
