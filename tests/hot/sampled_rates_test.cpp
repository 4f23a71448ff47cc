// GoodTuringCounts: the expected pushes of the keys a sample found. The
// population test draws a long-tailed workload with known rates, samples it,
// and compares what each estimate predicts for the keys the sample found
// with what those keys then do in a second sample as long.
#include "hot/sampled_rates.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace libra::hot {
namespace {

TEST(GoodTuringCounts, SmallCountsShrinkByTheShareOfKeysSeenOnceMore) {
  // N(1) = 4, N(2) = 2, N(3) = 1: r*(1) = 2 * 2 / 4 = 1, r*(2) = 3 * 1 / 2 = 1.5,
  // r*(3) = 3 (no key seen 4 times: kept), 9 above the cut-off: kept.
  const std::vector<double> out = GoodTuringCounts({1, 1, 2, 1, 3, 2, 1, 9, 0});
  EXPECT_EQ(out, (std::vector<double>{1, 1, 1.5, 1, 3, 1.5, 1, 9, 0}));
}

TEST(GoodTuringCounts, NeverUpwardAndNeverOutOfOrder) {
  // N(1) = 1, N(2) = 5: r*(1) = 10 would exceed 1 (kept at 1); N(3) = 0.
  const std::vector<double> out = GoodTuringCounts({1, 2, 2, 2, 2, 2});
  EXPECT_EQ(out[0], 1.0);
  EXPECT_EQ(out[1], 2.0);
  // N(1) = N(2) = 4, N(3) = 1: r*(2) = 3 * 1 / 4 = 0.75, below r*(1) = 1:
  // raised to it.
  const std::vector<double> ordered = GoodTuringCounts({1, 1, 1, 1, 2, 2, 2, 2, 3, 4});
  EXPECT_EQ(ordered[0], 1.0);
  EXPECT_EQ(ordered[4], 1.0);
}

// Keys with Zipf-like rates, pushed (or not) once per push each; counts of
// `pushes` pushes (sampled epochs times workers) from `rng`.
std::vector<std::uint64_t> Sample(const std::vector<double>& rates, int pushes,
                                  std::mt19937_64& rng) {
  std::vector<std::uint64_t> counts(rates.size(), 0);
  for (int e = 0; e < pushes; ++e) {
    for (size_t k = 0; k < rates.size(); ++k) {
      const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
      if (u < rates[k]) ++counts[k];
    }
  }
  return counts;
}

TEST(GoodTuringCounts, PredictTheTailASampleFoundWhereRawCountsOverstateIt) {
  std::vector<double> rates;
  for (int k = 1; k <= 200000; ++k) rates.push_back(std::min(1.0, 20.0 / k));
  std::mt19937_64 rng(7);
  constexpr int kPushes = 6;  // 3 sampled epochs of 2 workers: a short sample
  const std::vector<std::uint64_t> first = Sample(rates, kPushes, rng);
  const std::vector<std::uint64_t> second = Sample(rates, kPushes, rng);
  std::vector<std::uint64_t> seen;
  double then = 0, raw = 0;
  for (size_t k = 0; k < rates.size(); ++k) {
    if (first[k] == 0) continue;
    seen.push_back(first[k]);
    raw += static_cast<double>(first[k]);
    then += static_cast<double>(second[k]);
  }
  double corrected = 0;
  for (const double c : GoodTuringCounts(seen)) corrected += c;
  // A simulation of the same workload: raw 3.1x, corrected 1.1x (and
  // 0.94-1.11x for other skews and
  // 6-40 pushes; 1.3x with only 3).
  EXPECT_GT(raw / then, 2.0) << "raw counts overstate the found tail";
  EXPECT_NEAR(corrected / then, 1.0, 0.15);
}

}  // namespace
}  // namespace libra::hot
