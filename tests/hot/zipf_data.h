// Small skewed data sets for the hot-parameter tests: rows of `fields`
// categorical features, each field's value drawn from a Zipf distribution
// over its own vocabulary, as in CTR logs.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "hot/hot_profiler.h"

namespace libra::hot::testing {

class ZipfKeys {
 public:
  ZipfKeys(uint64_t vocabulary, double exponent, uint64_t seed) : random_(seed) {
    cumulative_.reserve(vocabulary);
    double sum = 0;
    for (uint64_t rank = 1; rank <= vocabulary; ++rank) {
      sum += 1.0 / std::pow(double(rank), exponent);
      cumulative_.push_back(sum);
    }
  }
  // A rank in [0, vocabulary), rank 0 the most likely.
  uint64_t Next() {
    const double u = std::uniform_real_distribution<double>(0, cumulative_.back())(random_);
    return static_cast<uint64_t>(std::upper_bound(cumulative_.begin(), cumulative_.end(), u) -
                                 cumulative_.begin());
  }

 private:
  std::mt19937_64 random_;
  std::vector<double> cumulative_;
};

struct GeneratedRows {
  std::vector<uint64_t> row_begin{0};
  std::vector<Key> keys;
  SparseRows view() const { return SparseRows{row_begin, keys}; }
};

inline GeneratedRows MakeZipfRows(uint64_t rows, uint32_t fields, uint64_t vocabulary,
                                  double exponent, uint64_t seed) {
  GeneratedRows data;
  ZipfKeys zipf(vocabulary, exponent, seed);
  data.keys.reserve(rows * fields);
  for (uint64_t r = 0; r < rows; ++r) {
    for (uint32_t f = 0; f < fields; ++f) {
      // Spread ranks over the key space so keys are not in heat order.
      data.keys.push_back((uint64_t{f} << 40) ^ (zipf.Next() * 0x9E3779B97F4A7C15ull >> 24));
    }
    data.row_begin.push_back(data.keys.size());
  }
  return data;
}

}  // namespace libra::hot::testing
