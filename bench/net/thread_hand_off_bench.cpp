// The CPU one thread hand-off costs: two threads pass a token back and
// forth through a mutex and a condition variable, each blocked until the
// other wakes it, as the hot path's threads hand an epoch on (a push to the
// sender's I/O thread, a collected epoch to the server's dispatcher, a
// finished read to the waiting worker). An iteration is one round trip, two
// hand-offs; the time is the process's CPU, both threads. Pinned to one
// core (`taskset -c 0`) the wake-up is a plain context switch; across
// cores it takes an inter-processor interrupt, which a virtual machine
// pays for with an exit to its host (docs/PERFORMANCE.md, "A forced set").
#include <benchmark/benchmark.h>

#include <condition_variable>
#include <mutex>
#include <thread>

namespace libra::net {
namespace {

void BM_ThreadHandOffRoundTrip(benchmark::State& state) {
  std::mutex mutex;
  std::condition_variable changed;
  bool to_other = false;  // whose turn: the other thread's while true
  bool stop = false;
  std::thread other([&] {
    std::unique_lock lock(mutex);
    while (true) {
      changed.wait(lock, [&] { return to_other || stop; });
      if (stop) return;
      to_other = false;
      changed.notify_one();
    }
  });
  for (auto _ : state) {
    std::unique_lock lock(mutex);
    to_other = true;
    changed.notify_one();
    changed.wait(lock, [&] { return !to_other; });
  }
  {
    std::lock_guard lock(mutex);
    stop = true;
  }
  changed.notify_one();
  other.join();
  state.SetItemsProcessed(state.iterations() * 2);  // hand-offs
}
BENCHMARK(BM_ThreadHandOffRoundTrip)->MeasureProcessCPUTime()->UseRealTime();

}  // namespace
}  // namespace libra::net
