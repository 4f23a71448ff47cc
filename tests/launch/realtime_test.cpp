// --realtime: the process, the threads it starts and the processes it forks
// run under SCHED_FIFO, or the refusal says why and changes nothing. Each
// case runs in a forked child, so the test binary keeps its own policy.
#include "launch/realtime.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

namespace libra::launch {
namespace {

// The policy a new thread and a forked child of the calling thread get,
// packed as an exit status: 0 when both are SCHED_FIFO at `priority`.
int InheritedPolicy(int priority) {
  int thread_policy = -1;
  std::thread([&] { thread_policy = sched_getscheduler(0); }).join();
  const pid_t child = fork();
  if (child == 0) {
    sched_param param{};
    sched_getparam(0, &param);
    _exit(sched_getscheduler(0) == SCHED_FIFO && param.sched_priority == priority ? 0 : 1);
  }
  int status = 0;
  waitpid(child, &status, 0);
  const bool child_fifo = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return (thread_policy == SCHED_FIFO ? 0 : 2) | (child_fifo ? 0 : 4);
}

// Runs `body` in a forked child and returns its exit status.
template <typename Body>
int InChild(Body body) {
  const pid_t child = fork();
  if (child == 0) _exit(body());
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
}

bool MayRunRealtime() {
  return InChild([] { return EnterRealtimeScheduling(kRealtimePriority) ? 1 : 0; }) == 0;
}

TEST(RealtimeTest, ThreadsAndProcessesStartedAfterwardsInheritSchedFifo) {
  if (!MayRunRealtime()) GTEST_SKIP() << "this process may not use SCHED_FIFO (not root)";
  EXPECT_EQ(InChild([] {
              if (EnterRealtimeScheduling(kRealtimePriority)) return 8;
              return InheritedPolicy(kRealtimePriority);
            }),
            0);
}

TEST(RealtimeTest, ARefusalSaysWhyAndLeavesThePolicyAsItWas) {
  // Above RLIMIT_RTPRIO (0 for an ordinary user) a process without
  // CAP_SYS_NICE is refused; a priority no policy has is refused for anyone.
  EXPECT_EQ(InChild([] {
              const int before = sched_getscheduler(0);
              const std::optional<std::string> why = EnterRealtimeScheduling(1000);
              if (!why || why->find("SCHED_FIFO at priority 1000") == std::string::npos) return 1;
              return sched_getscheduler(0) == before ? 0 : 2;
            }),
            0);
}

}  // namespace
}  // namespace libra::launch
