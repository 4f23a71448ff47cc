// Multi-process tests of the PS-lite-compatible runtime: real scheduler,
// server and worker processes on loopback, started by `libra launch` or by
// hand (for failure detection).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include "common/run_command.h"
#include "customers_job.h"
#include "launch/launcher.h"
#include "ps/ps.h"

namespace {

using libra::test_support::CommandResult;
using libra::test_support::CountOccurrences;
using libra::test_support::RunCommand;

struct JobCase {
  std::string mode;
  int servers;
  int workers;
  bool local = false;  // DMLC_LOCAL=1: Unix-domain sockets instead of TCP
};

std::string CaseName(const testing::TestParamInfo<JobCase>& info) {
  return info.param.mode + "_" + std::to_string(info.param.servers) + "s" +
         std::to_string(info.param.workers) + "w" + (info.param.local ? "_local" : "");
}

class PsJob : public testing::TestWithParam<JobCase> {};

TEST_P(PsJob, EveryWorkerPasses) {
  const JobCase& c = GetParam();
  std::string command = std::string(c.local ? "DMLC_LOCAL=1 " : "") + LIBRA_BIN +
                        " launch --timeout 60 -s " + std::to_string(c.servers) + " -w " +
                        std::to_string(c.workers) + " -- " + KV_PROGRAM + " " + c.mode;
  CommandResult r = RunCommand(command);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(CountOccurrences(r.output, "PASS " + c.mode), c.workers) << r.output;
  // Output is prefixed by role and rank.
  EXPECT_NE(r.output.find("[worker " + std::to_string(c.workers - 1) + "] PASS"), std::string::npos)
      << r.output;
}

INSTANTIATE_TEST_SUITE_P(Runtime, PsJob,
                         testing::Values(JobCase{"sum", 1, 1}, JobCase{"sum", 1, 4},
                                         JobCase{"sum", 3, 1}, JobCase{"sum", 3, 4},
                                         JobCase{"many", 1, 2}, JobCase{"many", 3, 3},
                                         JobCase{"pushpull", 2, 3}, JobCase{"zerocopy", 1, 2},
                                         JobCase{"zerocopy", 3, 2}, JobCase{"lens", 1, 2},
                                         JobCase{"lens", 3, 3}, JobCase{"callback", 3, 2},
                                         JobCase{"slicer", 3, 2}, JobCase{"multi_customer", 2, 2},
                                         JobCase{"simple_app", 3, 2}, JobCase{"sum", 2, 3, true},
                                         JobCase{"zerocopy", 1, 2, true}),
                         CaseName);

TEST(Compatibility, ClassicPsLiteProgramShape) {
  CommandResult r =
      RunCommand(std::string(LIBRA_BIN) + " launch --timeout 60 -s 2 -w 3 -- " + CLASSIC_PROGRAM);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(CountOccurrences(r.output, "PASS classic"), 3) << r.output;
}

// PS-lite's helper headers and calls (dmlc/logging.h, GetEnv, PS_VLOG,
// ParallelSort, ParallelOrderedMatch, ThreadsafePQueue, is_recovery, errors
// caught as dmlc::Error) in a C++11 program on every node of a job.
TEST(Compatibility, PsLiteHelperHeadersAndCalls) {
  CommandResult r = RunCommand("LIBRA_COMPAT_RATE=0.25 " + std::string(LIBRA_BIN) +
                               " launch --timeout 60 -s 2 -w 2 -- " + PSLITE_COMPAT_PROGRAM);
  EXPECT_EQ(r.status, 0) << r.output;
}

// Customers as workers (PS-lite's test_kv_app_multi_workers): each
// customer of each worker process is a worker (customers_job.h).
class CustomersAsWorkers : public testing::TestWithParam<libra::test_support::CustomersCase> {};

TEST_P(CustomersAsWorkers, EachCustomerIsAWorker) {
  std::ostringstream output;
  EXPECT_EQ(libra::test_support::RunCustomersJob(GetParam(), {}, {}, &output), 0) << output.str();
}

INSTANTIATE_TEST_SUITE_P(Runtime, CustomersAsWorkers,
                         testing::Values(libra::test_support::CustomersCase{1, 1, 2},
                                         libra::test_support::CustomersCase{2, 1, 2},
                                         libra::test_support::CustomersCase{2, 2, 2},
                                         libra::test_support::CustomersCase{1, 2, 3}),
                         libra::test_support::CustomersCaseName);

// The job's ZeroMQ connections under its PS_JOB_SECRET (src/ps/zmq_curve.h;
// `libra launch` draws one per job, so every test above runs with it): a
// worker with another secret cannot even register, and the job stops at
// the start timeout instead of taking it in.
TEST(JobSecret, ANodeWithAnotherSecretCannotJoinTheJob) {
  libra::LocalJob job;
  job.num_servers = 1;
  job.num_workers = 2;
  job.command = {KV_PROGRAM, "sum"};
  std::vector<libra::ProcessSpec> processes = libra::LocalJobProcesses(job);
  ASSERT_EQ(processes.back().name, "worker 1");
  ASSERT_EQ(processes.back().env.count("PS_JOB_SECRET"), 1u);
  processes.back().env["PS_JOB_SECRET"] = "not this job's secret";
  // The scheduler gives up first (the others wait far longer), so its
  // count of registered nodes is what stops the job.
  for (libra::ProcessSpec& p : processes) {
    p.env["PS_START_TIMEOUT"] = p.name == "scheduler" ? "2" : "60";
  }
  std::ostringstream output;
  libra::RunOptions options;
  options.timeout_s = 60;
  options.output = &output;
  EXPECT_NE(libra::RunProcesses(processes, options, nullptr), 0) << output.str();
  EXPECT_NE(output.str().find("2 of 3 nodes registered"), std::string::npos) << output.str();
  EXPECT_EQ(CountOccurrences(output.str(), "PASS sum"), 0) << output.str();
}

// SimpleApp requests that reach a node before its app exists, or before the
// app has set its request handle, wait for the handle and never meet the
// default one (simple_app_program.cpp). Repeated, over TCP and ipc, since
// the crash this replaces was a race.
TEST(SimpleAppEarlyRequests, WaitForTheApplicationsHandle) {
  for (int run = 0; run < 20; ++run) {
    const bool local = run % 2 == 1;
    CommandResult r =
        RunCommand(std::string(local ? "DMLC_LOCAL=1 " : "") + LIBRA_BIN +
                   " launch --timeout 60 -s 2 -w 2 -- " + SIMPLE_APP_PROGRAM + " handle");
    ASSERT_EQ(r.status, 0) << "run " << run << (local ? " (ipc)" : " (tcp)") << "\n" << r.output;
  }
}

// An app whose handle is set before its customer exists (Libra's control
// apps) may answer a parked request before its constructor has set obj_.
TEST(SimpleAppEarlyRequests, AnAppMayAnswerBeforeItsConstructorEnds) {
  CommandResult r = RunCommand(std::string(LIBRA_BIN) + " launch --timeout 60 -s 2 -w 2 -- " +
                               SIMPLE_APP_PROGRAM + " subclass");
  EXPECT_EQ(r.status, 0) << r.output;
}

// An app that never sets a request handle answers with the default (an empty
// body) once its node calls Finalize.
TEST(SimpleAppEarlyRequests, WithoutAHandleTheDefaultAnswersAtFinalize) {
  CommandResult r = RunCommand(std::string(LIBRA_BIN) + " launch --timeout 60 -s 2 -w 2 -- " +
                               SIMPLE_APP_PROGRAM + " default");
  EXPECT_EQ(r.status, 0) << r.output;
}

TEST(Launch, FailingProcessStopsTheOthers) {
  // Workers run `false`; the launcher must report it and not wait for the rest.
  auto start = std::chrono::steady_clock::now();
  CommandResult r = RunCommand(std::string(LIBRA_BIN) + " launch -s 1 -w 2 -- sh -c " +
                               "'if [ $DMLC_ROLE = worker ]; then exit 5; else sleep 60; fi'");
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.status, 5) << r.output;
  EXPECT_NE(r.output.find("exited with status 5"), std::string::npos) << r.output;
  EXPECT_LT(seconds, 30.0);
}

TEST(Launch, TimeoutStopsEverything) {
  CommandResult r =
      RunCommand(std::string(LIBRA_BIN) + " launch --timeout 1 -s 1 -w 1 -- sleep 60");
  EXPECT_EQ(r.status, 124) << r.output;
  EXPECT_NE(r.output.find("timed out"), std::string::npos) << r.output;
}

TEST(Launch, BadFlagIsNamed) {
  CommandResult r = RunCommand(std::string(LIBRA_BIN) + " launch -w 0 -- true");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("--workers"), std::string::npos) << r.output;
}

// Starts one node of a job by hand, its output going to `log`.
pid_t StartNode(const std::map<std::string, std::string>& env, const std::string& log,
                const std::string& mode) {
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    execl(KV_PROGRAM, KV_PROGRAM, mode.c_str(), nullptr);
    _exit(127);
  }
  return pid;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Waits up to `seconds` for pid; returns its status, or -1 if still running.
int WaitFor(pid_t pid, double seconds) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    int status;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return -1;
}

TEST(FailureDetection, KilledWorkerStopsTheJobNamingIt) {
  std::string dir = testing::TempDir();
  std::map<std::string, std::string> env{
      {"DMLC_NUM_SERVER", "1"},
      {"DMLC_NUM_WORKER", "2"},
      {"DMLC_PS_ROOT_URI", "127.0.0.1"},
      {"DMLC_PS_ROOT_PORT", std::to_string(libra::FindFreePort())},
      {"PS_HEARTBEAT_INTERVAL", "1"},
      {"PS_HEARTBEAT_TIMEOUT", "2"}};
  auto with = [&](const std::string& role, int rank) {
    auto e = env;
    e["DMLC_ROLE"] = role;
    if (rank >= 0) e["LIBRA_RANK"] = std::to_string(rank);
    return e;
  };
  std::string prefix = dir + "/hb_" + std::to_string(getpid());
  pid_t scheduler = StartNode(with("scheduler", -1), prefix + "_scheduler.log", "hang");
  pid_t server = StartNode(with("server", 0), prefix + "_server.log", "hang");
  pid_t worker0 = StartNode(with("worker", 0), prefix + "_worker0.log", "hang");
  pid_t worker1 = StartNode(with("worker", 1), prefix + "_worker1.log", "hang");

  // Wait until worker 1 is up, then kill it.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (ReadFile(prefix + "_worker1.log").find("READY") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_NE(ReadFile(prefix + "_worker1.log").find("READY"), std::string::npos);
  auto killed_at = std::chrono::steady_clock::now();
  kill(worker1, SIGKILL);
  WaitFor(worker1, 5);

  // Timeout 2 s, heartbeats every 1 s: everyone must be gone well within 10 s.
  int s_status = WaitFor(scheduler, 10);
  int v_status = WaitFor(server, 5);
  int w_status = WaitFor(worker0, 5);
  double detect_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - killed_at).count();
  for (pid_t p : {scheduler, server, worker0}) kill(p, SIGKILL);

  EXPECT_EQ(s_status, 1);
  EXPECT_EQ(v_status, 1);
  EXPECT_EQ(w_status, 1);
  EXPECT_LT(detect_s, 15.0);
  std::string log = ReadFile(prefix + "_scheduler.log");
  EXPECT_NE(log.find("worker 1"), std::string::npos) << log;
  EXPECT_NE(log.find("sent no heartbeat"), std::string::npos) << log;
  EXPECT_NE(ReadFile(prefix + "_server.log").find("worker 1"), std::string::npos);
}

TEST(BadEnvironment, MissingOrInvalidVariablesAreNamed) {
  struct Case {
    std::string env;
    std::string expected;
  };
  std::string base = "DMLC_NUM_SERVER=1 DMLC_NUM_WORKER=1 DMLC_PS_ROOT_URI=127.0.0.1 ";
  for (const Case& c : {
           Case{"DMLC_NUM_SERVER=1 DMLC_NUM_WORKER=1 DMLC_PS_ROOT_URI=127.0.0.1 "
                "DMLC_PS_ROOT_PORT=9",
                "DMLC_ROLE"},
           Case{base + "DMLC_PS_ROOT_PORT=9 DMLC_ROLE=boss", "DMLC_ROLE='boss'"},
           Case{base + "DMLC_PS_ROOT_PORT=99999 DMLC_ROLE=worker", "DMLC_PS_ROOT_PORT"},
           Case{"DMLC_NUM_SERVER=1 DMLC_NUM_WORKER=two DMLC_ROLE=worker", "DMLC_NUM_WORKER"},
           Case{"DMLC_NUM_SERVER=1 DMLC_NUM_WORKER=1 DMLC_ROLE=worker", "DMLC_PS_ROOT_URI"},
           Case{base + "DMLC_PS_ROOT_PORT=9 DMLC_ROLE=worker LIBRA_SWITCH=127.0.0.1:9 "
                       "LIBRA_PLAIN_EPOCH=sometimes",
                "LIBRA_PLAIN_EPOCH='sometimes'"},
           Case{base + "DMLC_PS_ROOT_PORT=9 DMLC_ROLE=worker LIBRA_SWITCH=127.0.0.1:9 "
                       "LIBRA_UDP_SEGMENTATION=yes",
                "LIBRA_UDP_SEGMENTATION"},
       }) {
    CommandResult r = RunCommand("env -i " + c.env + " " + KV_PROGRAM + " sum");
    EXPECT_NE(r.status, 0) << c.env;
    EXPECT_NE(r.output.find(c.expected), std::string::npos) << c.env << "\n" << r.output;
  }
}

// PS-lite programs do not catch what ps::Start throws: a bad setting used to
// end in "terminate called after throwing 'ps::Error'" and SIGABRT (134).
// The runtime now prints the message and exits with kStartFailedExitStatus.
TEST(BadEnvironment, ANodeThatCannotStartExitsWithItsOwnStatus) {
  const std::string job = "DMLC_NUM_SERVER=1 DMLC_PS_ROOT_URI=127.0.0.1 ";
  const std::string worker = job + "DMLC_NUM_WORKER=1 DMLC_ROLE=worker ";
  for (const std::string& env : {
           job + "DMLC_NUM_WORKER=1 DMLC_PS_ROOT_PORT=9 DMLC_ROLE=foo",
           worker + "DMLC_PS_ROOT_PORT=notaport",
           worker + "DMLC_PS_ROOT_PORT=70000",
           worker + "DMLC_PS_ROOT_PORT=-1",
           job + "DMLC_PS_ROOT_PORT=9 DMLC_ROLE=worker",
           job + "DMLC_NUM_WORKER=0 DMLC_PS_ROOT_PORT=9 DMLC_ROLE=worker",
           std::string("DMLC_NUM_SERVER=1 DMLC_NUM_WORKER=1 DMLC_ROLE=worker DMLC_PS_ROOT_PORT=9 "
                       "DMLC_PS_ROOT_URI=no-such-host.invalid"),
           worker + "DMLC_PS_ROOT_PORT=9 DMLC_NODE_PORT=99999",
           worker + "DMLC_PS_ROOT_PORT=9 LIBRA_SWITCH=127.0.0.1:9 LIBRA_PLAIN_EPOCH=sometimes",
       }) {
    const CommandResult r = RunCommand("env -i " + env + " " + KV_PROGRAM + " sum");
    EXPECT_EQ(r.status, ps::kStartFailedExitStatus) << env << "\n" << r.output;
  }
}

}  // namespace
