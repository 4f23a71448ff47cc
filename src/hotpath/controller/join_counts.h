// The workers' sampled counts as the controller gathers their JOINs. A
// JOIN's counts are summed as it comes, behind the JOINs still on their
// way, or kept unread until the choice needs them: with the cost model, the
// JOINs' headers alone may already rule out every hot set (controller.h,
// MaySumLater), and then no count is ever read.
#pragma once

#include <string>
#include <vector>

#include "hotpath/controller/sampled_sums.h"

namespace libra::hotpath {

class JoinCounts {
 public:
  // A JOIN's encoded body from node `sender`: its counts summed now, or,
  // if `later`, kept for SumKept. False when counts summed now are
  // malformed (then nothing of them is summed).
  bool Add(std::string body, int sender, bool later);

  // Sums the counts of every JOIN kept for later: the same sums as if each
  // had been summed when it came (a key's server and length, the same in
  // every JOIN that names it, from the first summed). Throws
  // std::runtime_error naming the node whose counts are malformed.
  void SumKept();

  // Every count summed so far, per key.
  const SampledSums& sums() const { return sums_; }

 private:
  struct Kept {
    std::string body;
    int sender = 0;
  };
  SampledSums sums_;
  std::vector<Kept> kept_;
};

}  // namespace libra::hotpath
