#include "hotpath/node/engine_clock.h"

namespace libra::hotpath {
namespace {

class Steady final : public EngineClock {
 public:
  Clock::time_point Now() const override { return Clock::now(); }
};

}  // namespace

const EngineClock& SteadyEngineClock() {
  static const Steady clock;
  return clock;
}

}  // namespace libra::hotpath
