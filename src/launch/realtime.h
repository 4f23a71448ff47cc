// Real-time scheduling for a job's processes (`--realtime`).
//
// On a machine whose cores its processes share (a local job, the loopback
// bench), an iteration is a chain of hand-offs between threads of different
// processes: a push's packets, the switch, the server, the replica, the
// pull. Under the kernel's default policy a woken thread often waits for the
// thread running on its core to be preempted, while the other core idles;
// the hot path's chain has more such hand-offs than the plain PS's, so it
// pays more for each wait (docs/PERFORMANCE.md, "A forced set"). Under
// SCHED_FIFO a woken thread runs at once, on a core it finds free.
#pragma once

#include <optional>
#include <string>

namespace libra::launch {

// The SCHED_FIFO priority of `--realtime`: above every ordinary thread and
// below the kernel's own real-time threads (priority 50 and up).
inline constexpr int kRealtimePriority = 10;

// Puts the calling thread under SCHED_FIFO at `priority`; every thread it
// starts and every process it forks from then on inherit that. Call it
// before starting the job's threads and processes. Returns why not when the
// system refuses (without CAP_SYS_NICE, or above RLIMIT_RTPRIO), and
// changes nothing then. The kernel's real-time throttling
// (/proc/sys/kernel/sched_rt_runtime_us) still leaves the other tasks a
// share of every core should a thread spin.
std::optional<std::string> EnterRealtimeScheduling(int priority = kRealtimePriority);

}  // namespace libra::launch
