#include "hot/sampled_rates.h"

#include <algorithm>

namespace libra::hot {

std::vector<double> GoodTuringCounts(const std::vector<std::uint64_t>& counts) {
  // N(r) for r = 0 .. kGoodTuringMaxCount + 1.
  std::vector<double> keys_seen(kGoodTuringMaxCount + 2, 0.0);
  for (const std::uint64_t r : counts) {
    if (r < keys_seen.size()) keys_seen[r] += 1;
  }
  // r* per r; corrected only while N(r) and N(r+1) are both there, and kept
  // in order (a key seen more often never expected rarer than one seen less).
  std::vector<double> expected(kGoodTuringMaxCount + 1, 0.0);
  double floor = 0;
  for (std::uint64_t r = 1; r <= kGoodTuringMaxCount; ++r) {
    double estimate = static_cast<double>(r);
    if (keys_seen[r] > 0 && keys_seen[r + 1] > 0) {
      estimate = std::min(estimate, (r + 1) * keys_seen[r + 1] / keys_seen[r]);
    }
    floor = std::max(floor, estimate);
    expected[r] = floor;
  }
  std::vector<double> out;
  out.reserve(counts.size());
  for (const std::uint64_t r : counts) {
    out.push_back(r <= kGoodTuringMaxCount ? expected[r] : static_cast<double>(r));
  }
  return out;
}

}  // namespace libra::hot
