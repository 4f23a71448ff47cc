// How often a key will be pushed, from how often it was pushed while the
// controller sampled.
//
// A key's sampled count is a fair estimate of its rate only for a key chosen
// before the sample. The cost model prices the keys that the sample itself
// found: a key seen once in a short sample is, on average, rarer than once
// per sample (most keys of a long tail are not seen at all, and those that
// are were lucky). Priced at their raw counts, the tail of a skewed workload
// looked 2-3 times as busy as it then was (the job report's
// cost_model_check: written values and COLLECTs per epoch predicted 2.5-3.3x
// the measured). Good-Turing's estimate corrects this from the sample alone:
// a key seen r times is expected to be pushed r* = (r + 1) N(r+1) / N(r)
// times in a sample as long, N(r) being how many keys were seen r times.
// Above a few counts the raw count is already good (and N(r) too thin to
// use), so only small counts are corrected, and never upward.
#pragma once

#include <cstdint>
#include <vector>

namespace libra::hot {

// Counts of r up to this are corrected (Katz's usual cut-off).
inline constexpr std::uint64_t kGoodTuringMaxCount = 5;

// The expected count, in a new sample as long, of each key of `counts` (the
// sampled counts of the keys seen, each >= 1; zeros stay zero).
std::vector<double> GoodTuringCounts(const std::vector<std::uint64_t>& counts);

}  // namespace libra::hot
