#include "ps/allocator_tuning.h"

#include <malloc.h>

#include "ps/internal/env.h"

namespace ps {

bool TuneAllocatorForLargeMessages() {
  if (Environment::Get()->IntOr("LIBRA_MALLOC_TUNING", 1, 0, 1) == 0) return false;
#if defined(__GLIBC__)
  // ZeroMQ's I/O threads would otherwise get arenas of their own, whose
  // heaps cannot hold a block above 64 MiB and mmap it whatever M_MMAP_MAX says.
  bool applied = mallopt(M_ARENA_MAX, 1) == 1;
  applied = mallopt(M_MMAP_MAX, 0) == 1 && applied;
  constexpr int kKeepFreedBytes = 256 << 20;
  applied = mallopt(M_TRIM_THRESHOLD, kKeepFreedBytes) == 1 && applied;
  return applied;
#else
  return false;
#endif
}

}  // namespace ps
