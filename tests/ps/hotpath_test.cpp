// Multi-process tests of Libra's hot path inside the PS-lite runtime: the
// PS-lite-style programs of kv_program.cc run unchanged with LIBRA_* set and
// a real `libra switchd` on loopback. Each program checks exact sums, so
// passing with the hot path on means its results are identical to the plain
// run (the same programs pass without Libra in multiprocess_test.cc).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/run_command.h"
#include "common/switchd_process.h"
#include "common/temp_dir.h"
#include "customers_job.h"
#include "hot/hot_set.h"
#include "hot/placement.h"
#include "launch/launcher.h"

namespace {

using libra::test_support::CommandResult;
using libra::test_support::CountOccurrences;
using libra::test_support::RunCommand;

// Runs kv_program MODE with the hot path on (sampling the first
// `sample_epochs` pushes) through `sw`.
CommandResult RunWithSwitch(const libra::test_support::SwitchdProcess& sw, const std::string& mode,
                            int servers, int workers, int sample_epochs,
                            const std::string& extra_env = "") {
  const std::string env = "LIBRA_SWITCH=" + sw.data.ToString() +
                          " LIBRA_SWITCH_CONTROL=" + sw.control +
                          " LIBRA_SAMPLE_EPOCHS=" + std::to_string(sample_epochs) +
                          " LIBRA_CAPACITY=200 " + extra_env + " ";
  return RunCommand(env + LIBRA_BIN + " launch --timeout 60 -s " + std::to_string(servers) +
                    " -w " + std::to_string(workers) + " -- " + KV_PROGRAM + " " + mode);
}

struct HotCase {
  std::string mode;
  int servers;
  int workers;
};

std::string CaseName(const testing::TestParamInfo<HotCase>& info) {
  return info.param.mode + "_" + std::to_string(info.param.servers) + "s" +
         std::to_string(info.param.workers) + "w";
}

class HotPathJob : public testing::TestWithParam<HotCase> {};

TEST_P(HotPathJob, SameResultsAsThePlainParameterServer) {
  const HotCase& c = GetParam();
  libra::test_support::SwitchdProcess sw;
  const CommandResult r = RunWithSwitch(sw, c.mode, c.servers, c.workers, 1);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(CountOccurrences(r.output, "PASS " + c.mode), c.workers) << r.output;
  // The hot path really carried the hot keys: every worker switched to it.
  EXPECT_NE(r.output.find("libra: hot path on from epoch 1"), std::string::npos) << r.output;
  EXPECT_EQ(CountOccurrences(r.output, "on the hot path from epoch 1 "), c.workers) << r.output;
}

INSTANTIATE_TEST_SUITE_P(Libra, HotPathJob,
                         testing::Values(HotCase{"sum", 1, 1}, HotCase{"sum", 3, 4},
                                         HotCase{"many", 2, 3}, HotCase{"pushpull", 2, 3},
                                         HotCase{"zerocopy", 3, 2}, HotCase{"lens", 3, 3},
                                         HotCase{"callback", 2, 2}, HotCase{"slicer", 3, 2}),
                         CaseName);

// Packet loss on every message type through the switch (DATA, ACK, FIN,
// READY, COLLECT, RESULT, UPDATE, REPLICA): retransmissions, re-collects and
// replica repairs still give the exact sums.
class HotPathLoss : public testing::TestWithParam<HotCase> {};

TEST_P(HotPathLoss, ProgramsStillGetExactResults) {
  const HotCase& c = GetParam();
  libra::test_support::SwitchdProcess sw({"--drop-rate", "0.05", "--drop-seed", "7"});
  const CommandResult r = RunWithSwitch(sw, c.mode, c.servers, c.workers, 1);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(CountOccurrences(r.output, "PASS " + c.mode), c.workers) << r.output;
  EXPECT_EQ(CountOccurrences(r.output, "on the hot path from epoch 1 "), c.workers) << r.output;
}

INSTANTIATE_TEST_SUITE_P(Libra, HotPathLoss,
                         testing::Values(HotCase{"sum", 2, 3}, HotCase{"pushpull", 2, 3},
                                         HotCase{"lens", 1, 2}),
                         CaseName);

// The sampling phase ends at the same epoch on every node, and the servers
// collect from exactly that epoch on.
TEST(HotPathSampling, EveryNodeSwitchesAtTheSameEpoch) {
  libra::test_support::SwitchdProcess sw;
  const CommandResult r = RunWithSwitch(sw, "many", 2, 3, 7, "PS_VERBOSE=1");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(CountOccurrences(r.output, "on the hot path from epoch 7 "), 3) << r.output;
  std::set<int> first_collected;
  const std::regex collected(R"(\[server (\d)\].*libra: collected epoch (\d+):)");
  std::set<int> seen_servers;
  for (std::sregex_iterator it(r.output.begin(), r.output.end(), collected), end; it != end; ++it) {
    const int server = std::stoi((*it)[1]);
    if (seen_servers.insert(server).second) first_collected.insert(std::stoi((*it)[2]));
  }
  EXPECT_EQ(first_collected, std::set<int>{7}) << r.output;
}

// Customers as workers with the switch (PS-lite's test_kv_app_multi_workers):
// each worker process runs `customers` customer threads, each a worker of
// its own, so the switch job has processes x customers workers. Every
// customer checks its exact sums (multi_worker_program.cpp) and, in its
// node's report, that its own worker path (its rank, sender and replica)
// carried all its hot epochs; every server that it applied all of them.
using libra::test_support::CustomersCase;

class HotPathCustomersAsWorkers : public testing::TestWithParam<CustomersCase> {};

// Runs multi_worker_program CUSTOMERS `mode` through `sw`, sampling the
// first 2 pushes, with every sampled key hot; the job's exit status.
int RunCustomersAsWorkers(const libra::test_support::SwitchdProcess& sw, const CustomersCase& c,
                          const std::string& mode, std::ostringstream* output) {
  return libra::test_support::RunCustomersJob(
      c, {mode},
      {{"LIBRA_SWITCH", sw.data.ToString()},
       {"LIBRA_SWITCH_CONTROL", sw.control},
       {"LIBRA_SAMPLE_EPOCHS", "2"},
       {"LIBRA_CAPACITY", "0"}},  // the whole switch: every sampled key is hot
      output);
}

TEST_P(HotPathCustomersAsWorkers, EachCustomerHasItsOwnHotPath) {
  libra::test_support::SwitchdProcess sw;
  std::ostringstream output;
  EXPECT_EQ(RunCustomersAsWorkers(sw, GetParam(), "hot", &output), 0) << output.str();
}

INSTANTIATE_TEST_SUITE_P(Libra, HotPathCustomersAsWorkers,
                         testing::Values(CustomersCase{1, 1, 2}, CustomersCase{2, 1, 2},
                                         CustomersCase{2, 2, 2}, CustomersCase{1, 2, 1}),
                         libra::test_support::CustomersCaseName);

// A server whose request handle answers only pulls (PS-lite's before
// PushPull) still gets each epoch's values: pulled after the push, once its
// answer to the first push that asked for them came without values
// (multi_worker_program checks the servers' counts and the exact sums).
TEST(HotPathCustomersAsWorkersHandles, AHandleThatAnswersOnlyPullsIsPulledAfterEachPush) {
  libra::test_support::SwitchdProcess sw;
  std::ostringstream output;
  EXPECT_EQ(RunCustomersAsWorkers(sw, CustomersCase{2, 1, 2}, "hot-pushonly", &output), 0)
      << output.str();
}

// The switch dies at hot epoch 10 and stays dead: the SWITCH_DOWN the
// controller sends to every worker id reaches each customer's own path,
// which falls back once; the servers sum the rest and the sums stay exact.
TEST(HotPathCustomersAsWorkersFallback, EachCustomerFallsBackWhenTheSwitchDies) {
  libra::test_support::SwitchdProcess sw({"--die-at-epoch", "10"});
  std::ostringstream output;
  EXPECT_EQ(RunCustomersAsWorkers(sw, CustomersCase{2, 2, 2}, "hot-dies", &output), 0)
      << output.str();
}

// The switch dies at hot epoch 10 and another is started at once in its
// place: every customer's own path falls back, the controller resumes each
// of them on the new switch (every customer waits for that before its later
// pushes), and the sums stay exact.
TEST(HotPathCustomersAsWorkersFallback, EachCustomerResumesWhenTheSwitchIsBack) {
  libra::test_support::SwitchdProcess sw({"--die-at-epoch", "10"});
  std::unique_ptr<libra::test_support::SwitchdProcess> again;
  std::thread restarter([&] {
    if (sw.WaitForExit(60) < 0) return;  // the job's checks say what went wrong
    again = std::make_unique<libra::test_support::SwitchdProcess>(
        std::vector<std::string>{}, sw.data.ToString(), sw.control_host_port());
  });
  std::ostringstream output;
  const int status = RunCustomersAsWorkers(sw, CustomersCase{2, 2, 2}, "hot-restart", &output);
  restarter.join();
  EXPECT_TRUE(again) << "the switch did not die at epoch 10\n" << output.str();
  EXPECT_EQ(status, 0) << output.str();
}

// With a hot-set file (no sampling) a worker joins at its first pull and
// reports its first push's magnitude in a SCALE; one that pushes before it
// pulls joins at that push. Both kinds of program get exact sums from the
// first epoch on, and a job whose workers only pull ends (the controller
// answers once their paths drain) instead of waiting for a push.
TEST(HotPathFile, ProgramsThatPushFirstPullFirstOrOnlyPullGetTheirResults) {
  libra::train::testing::TempDir dir;
  const std::string hot_set_path = dir.File("hot.set");
  // Keys 0 and 1 open the one server's key range: kv_program's TestKeys
  // holds both.
  libra::hot::WriteHotSetFile(
      libra::hot::PlaceHotSet({{0, 1, 10}, {1, 1, 9}}, libra::hot::SwitchLayout{},
                              libra::hot::HeatPlacement()),
      hot_set_path);
  for (const std::string mode : {"sum", "pushpull", "pullonly"}) {
    libra::test_support::SwitchdProcess sw;
    const CommandResult r =
        RunCommand("LIBRA_SWITCH=" + sw.data.ToString() + " LIBRA_SWITCH_CONTROL=" + sw.control +
                   " LIBRA_HOT_SET=" + hot_set_path + " " + LIBRA_BIN +
                   " launch --timeout 60 -s 1 -w 2 -- " + KV_PROGRAM + " " + mode);
    EXPECT_EQ(r.status, 0) << mode << "\n" << r.output;
    EXPECT_EQ(CountOccurrences(r.output, "PASS " + mode), 2) << r.output;
    EXPECT_NE(r.output.find("libra: hot path on from epoch 0"), std::string::npos) << r.output;
  }
}

// Workers that push unequally often: worker r of `kv_program uneven` pushes
// 3 + r times. (The launch's timeout would give status 124.)
CommandResult RunUnevenPushes(int servers, int workers, int sample_epochs) {
  libra::test_support::SwitchdProcess sw;
  return RunWithSwitch(sw, "uneven", servers, workers, sample_epochs);
}

// The controller's line for a job left plain because worker `rank` ended
// after `pushes` pushes, before it joined.
std::string EndedBeforeJoining(int rank, int pushes) {
  return "staying on the plain parameter server: worker " + std::to_string(rank) + " ended after " +
         std::to_string(pushes) + " pushes, before it joined the hot path";
}

// Runs kv_program `mode` (2 workers, 1 server, hot from epoch 1), in which
// worker 0's third push is unusual values, and expects the server to have
// said `server_said` and each worker's last pull to show `sums`: what the
// plain parameter server's pulls show for the same program.
void ExpectSumsAsOnThePlainServer(const std::string& mode, const std::string& server_said,
                                  const std::string& sums) {
  libra::test_support::SwitchdProcess sw;
  const CommandResult r = RunWithSwitch(sw, mode, 1, 2, 1);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(CountOccurrences(r.output, "PASS " + mode), 2) << r.output;
  EXPECT_NE(r.output.find("libra: hot path on from epoch 1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(server_said), std::string::npos) << server_said << "\n" << r.output;
  for (int rank = 0; rank < 2; ++rank) {
    const std::string seen = mode + ": worker " + std::to_string(rank) + " saw " + sums;
    EXPECT_NE(r.output.find(seen), std::string::npos) << seen << "\n" << r.output;
  }
}

// The hot path sums an epoch once every worker has pushed it: worker 0,
// done after epoch 2, pads epochs 3 and 4 with empty pushes, worker 1 epoch
// 4, and each worker's last pull sees every push of the epochs up to its own
// last one (epochs 0-2 of all three: 9; epoch 3 of workers 1 and 2: 11;
// epoch 4 of worker 2: 12). Before DONE and PAD the job waited for good.
TEST(HotPathUneven, WorkersThatEndEarlyPadTheEpochsOthersPushAfterThem) {
  const CommandResult r = RunUnevenPushes(2, 3, 1);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(CountOccurrences(r.output, "PASS uneven"), 3) << r.output;
  EXPECT_NE(r.output.find("libra: hot path on from epoch 1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("uneven: worker 0 saw 9"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("uneven: worker 1 saw 11"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("uneven: worker 2 saw 12"), std::string::npos) << r.output;
  for (const char* done : {"worker 0 pushes empty epochs", "worker 1 pushes empty epochs"}) {
    EXPECT_NE(r.output.find(done), std::string::npos) << done << "\n" << r.output;
  }
}

// With a sampling phase of 6 epochs worker 1 joins at its fourth push
// (epoch 3) and worker 0 ends after three, before it joins: its DONE
// answers the JOINs plain, and the program ends as PS-lite runs it.
TEST(HotPathUneven, AWorkerThatEndsBeforeItJoinsLeavesTheJobPlain) {
  const CommandResult r = RunUnevenPushes(1, 2, 6);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(CountOccurrences(r.output, "PASS uneven"), 2) << r.output;
  EXPECT_NE(r.output.find(EndedBeforeJoining(0, 3)), std::string::npos) << r.output;
}

// A worker that makes no KVWorker (kv_program idle: the last of three)
// never joins; at its Finalize it says it is done, and the two that push go
// on plain. Before, they waited for its JOIN at their first hot epoch for
// good, and it waited for them in Finalize's barrier.
TEST(HotPathUneven, AWorkerWithoutAKVWorkerLeavesTheJobPlain) {
  libra::test_support::SwitchdProcess sw;
  const CommandResult r = RunWithSwitch(sw, "idle", 1, 3, 1);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(CountOccurrences(r.output, "PASS idle"), 3) << r.output;
  EXPECT_EQ(CountOccurrences(r.output, "idle: worker"), 2) << r.output;
  EXPECT_NE(r.output.find(EndedBeforeJoining(2, 0)), std::string::npos) << r.output;
}

// kv_program twice: each worker pushes and pulls keys 0 and 1 four times
// with one KVWorker, then again with a new one. The hot path serves the
// first ones (every worker's epochs through the switch: each sees 8); the
// second ones run on the plain parameter server, which already holds those
// sums, so each worker's last pull sees them and its own four pushes, at
// least 12. Before, the second KVWorker started its epochs again from the
// first, the switch dropped them as stale, and the pulls saw 8.
TEST(HotPathUneven, ASecondKVWorkerAfterTheFirstEndedRunsPlain) {
  libra::test_support::SwitchdProcess sw;
  const CommandResult r = RunWithSwitch(sw, "twice", 1, 2, 1);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(CountOccurrences(r.output, "PASS twice"), 2) << r.output;
  EXPECT_EQ(CountOccurrences(r.output, "made a new KVWorker after its earlier one ended"), 2)
      << r.output;
  EXPECT_EQ(r.output.find("did not take epoch"), std::string::npos) << r.output;
  for (int rank = 0; rank < 2; ++rank) {
    const std::string said = "idle: worker " + std::to_string(rank) + " saw ";
    std::vector<double> seen;
    for (size_t at = r.output.find(said); at != std::string::npos;
         at = r.output.find(said, at + 1)) {
      seen.push_back(std::stod(r.output.substr(at + said.size())));
    }
    ASSERT_EQ(seen.size(), 2u) << r.output;
    EXPECT_EQ(seen[0], 8.0) << "worker " << rank << "\n" << r.output;
    EXPECT_GE(seen[1], 12.0) << "worker " << rank << "\n" << r.output;
  }
}

// A NaN and an infinity pushed to hot keys (kv_program nonfinite): the
// switch flags the sums, the server sums them from the workers' values, and
// they come out as the plain parameter server's float sums do, NaN and
// infinity, not the other values' sum.
TEST(HotPathSums, NanAndInfinityComeOutAsOnThePlainServer) {
  ExpectSumsAsOnThePlainServer("nonfinite", "summed exactly from the workers' values", "nan inf");
}

// Values far beyond the switch's fixed point (kv_program large: 1e30 and
// -3e12 at a scale of 2^26, where 64 bits hold about 6.9e10): summed in
// double precision from the workers' values, they come out as on the plain
// parameter server, not clamped.
TEST(HotPathSums, ValuesBeyondSixtyFourBitsComeOutAsOnThePlainServer) {
  ExpectSumsAsOnThePlainServer("large", "beyond 64 bits at the job's scale, in double precision",
                               "1e+30 -3e+12");
}

// Without a reachable switch the controller says why and the job runs on the
// plain parameter server: Libra never stops a job PS-lite would run.
TEST(HotPathFallback, UnreachableSwitchKeepsThePlainParameterServer) {
  const CommandResult r =
      RunCommand(std::string("LIBRA_SWITCH=127.0.0.1:9 LIBRA_SWITCH_CONTROL=127.0.0.1:9 "
                             "LIBRA_SAMPLE_EPOCHS=1 ") +
                 LIBRA_BIN + " launch --timeout 60 -s 1 -w 2 -- " + KV_PROGRAM + " sum");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(CountOccurrences(r.output, "PASS sum"), 2) << r.output;
  EXPECT_NE(r.output.find("staying on the plain parameter server"), std::string::npos) << r.output;
}

}  // namespace
