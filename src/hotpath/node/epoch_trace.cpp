#include "hotpath/node/epoch_trace.h"

#include <time.h>

#include <cstdio>
#include <cstdlib>

namespace libra::hotpath {

bool EpochTraceOn() {
  const char* value = std::getenv("LIBRA_TRACE");
  return value != nullptr && value[0] != '\0' && value[0] != '0';
}

void TraceEpoch(const char* event, int node, std::uint32_t epoch) {
  if (!EpochTraceOn()) return;
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  // One write per line, so that the lines of the node's threads do not mix.
  std::fprintf(stderr, "TRACE %s %d %u %lld\n", event, node, epoch,
               static_cast<long long>(now.tv_sec) * 1000000000LL + now.tv_nsec);
}

}  // namespace libra::hotpath
