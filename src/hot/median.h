// The median of a sample of timings: the cost model's measured plain epoch
// (each worker's epochs while sampling, then the workers' medians) and the
// job report's check of its predicted speedup take it the same way.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace libra::hot {

// The upper median: the middle value once sorted, of an even count the
// larger of the two middle ones; 0 for no values.
inline double UpperMedian(std::vector<double> values) {
  if (values.empty()) return 0;
  const std::size_t middle = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(middle),
                   values.end());
  return values[middle];
}

}  // namespace libra::hot
