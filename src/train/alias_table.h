// Walker's alias method: draws from a fixed discrete distribution in O(1)
// with one 64-bit random number, which is what makes generating millions of
// Zipf-distributed rows take seconds.
#pragma once

#include <cstdint>
#include <vector>

namespace libra::train {

class AliasTable {
 public:
  // `weights` need not be normalised; they must be non-negative with a
  // positive sum.
  explicit AliasTable(const std::vector<double>& weights);

  // The high 32 bits of `random` pick a column, the low 32 bits the coin.
  uint32_t Sample(uint64_t random) const {
    const uint32_t column = static_cast<uint32_t>(((random >> 32) * size_) >> 32);
    return static_cast<uint32_t>(random) < threshold_[column] ? column : alias_[column];
  }
  uint64_t size() const { return size_; }

 private:
  uint64_t size_;
  std::vector<uint32_t> threshold_;  // keep the column if coin < threshold (scaled to 2^32)
  std::vector<uint32_t> alias_;
};

}  // namespace libra::train
