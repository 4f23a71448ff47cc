#include "launch/realtime.h"

#include <sched.h>

#include <cerrno>
#include <cstring>

namespace libra::launch {

std::optional<std::string> EnterRealtimeScheduling(int priority) {
  sched_param param{};
  param.sched_priority = priority;
  if (sched_setscheduler(0, SCHED_FIFO, &param) == 0) return std::nullopt;
  const int error = errno;
  std::string why = "cannot run under SCHED_FIFO at priority " + std::to_string(priority) + ": " +
                    std::strerror(error);
  if (error == EPERM) why += " (it takes root, CAP_SYS_NICE or a high enough RLIMIT_RTPRIO)";
  return why;
}

}  // namespace libra::launch
