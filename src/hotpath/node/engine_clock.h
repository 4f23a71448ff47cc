// The time a hot-path engine's I/O thread runs by: its timers (retransmission,
// polls, grace periods) and its round-trip samples read it. Normally the
// steady clock; a test gives a ManualEngineClock and moves it by hand, so that
// a timer expires when the test says and never because the machine was slow.
#pragma once

#include <atomic>
#include <chrono>

namespace libra::hotpath {

class EngineClock {
 public:
  using Clock = std::chrono::steady_clock;
  virtual ~EngineClock() = default;
  virtual Clock::time_point Now() const = 0;
};

// The steady clock.
const EngineClock& SteadyEngineClock();

// A clock that stands still until Advance moves it (thread-safe: the test
// moves it while an engine's thread reads it). It starts at the steady
// clock's time of its construction.
class ManualEngineClock final : public EngineClock {
 public:
  ManualEngineClock() : nanos_(Clock::now().time_since_epoch().count()) {}
  Clock::time_point Now() const override {
    return Clock::time_point(Clock::duration(nanos_.load(std::memory_order_acquire)));
  }
  void Advance(Clock::duration by) { nanos_.fetch_add(by.count(), std::memory_order_acq_rel); }

 private:
  std::atomic<Clock::rep> nanos_;
};

}  // namespace libra::hotpath
