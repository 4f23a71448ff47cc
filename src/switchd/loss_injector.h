// Deterministic packet loss for tests: the same seed drops the same positions
// in the stream of packets it is asked about.
#pragma once

#include <cstdint>

namespace libra::switchd {

class LossInjector {
 public:
  // Drops each packet with probability `rate` (0 disables it).
  LossInjector(double rate, std::uint64_t seed)
      : threshold_(rate <= 0   ? 0
                   : rate >= 1 ? UINT64_MAX
                               : static_cast<std::uint64_t>(rate * 18446744073709551616.0)),
        state_(seed) {}

  bool ShouldDrop() {
    if (threshold_ == 0) return false;
    return Next() < threshold_;
  }

 private:
  // splitmix64: tiny, fast and well mixed.
  std::uint64_t Next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

  std::uint64_t threshold_;
  std::uint64_t state_;
};

}  // namespace libra::switchd
