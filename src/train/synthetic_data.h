// A synthetic CTR workload: rows with one categorical feature per field, key
// popularity Zipf-like within each field, and labels drawn from a hidden
// model (per-key weights plus low-rank pairwise interactions), so that the
// data is learnable and a better model measurably wins.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "train/alias_table.h"

namespace libra::train {

enum class SyntheticFormat { kLibsvm, kCriteo };

struct SyntheticOptions {
  uint64_t rows = 1'000'000;
  uint64_t keys = 1'000'000;  // vocabulary over all fields
  uint32_t fields = 26;
  // Zipf exponent of key popularity within a field. 0.85 makes the 30,000
  // most updated keys receive about half of all updates with the default
  // keys and fields (see docs/training.md for other values).
  double skew = 0.85;
  uint64_t seed = 1;
  SyntheticFormat format = SyntheticFormat::kLibsvm;
};

class SyntheticWorkload {
 public:
  // Throws std::invalid_argument naming the option that is out of range.
  explicit SyntheticWorkload(const SyntheticOptions& options);

  uint64_t keys_per_field() const { return keys_per_field_; }

  // Share of all feature occurrences that go to the `top` most popular keys,
  // from the popularity distribution itself (what a very long sample would
  // measure).
  double ExpectedTopKeyShare(uint64_t top) const;

  // Writes the data set to `path`. Rows are produced in fixed blocks, each
  // with its own random stream, so the bytes depend on the seed only, not on
  // the number of threads. Returns the number of bytes written; throws
  // std::runtime_error naming the file if it cannot be written.
  uint64_t Write(const std::string& path, unsigned threads = 0) const;

  // The text of rows [block * kBlockRows, ...) (exposed for tests).
  static constexpr uint64_t kBlockRows = 16384;
  void FormatBlock(uint64_t block, std::string* out) const;

 private:
  double Logit(const uint32_t* ranks) const;
  void AppendLibsvmRow(float label, const uint32_t* ranks, std::string* out) const;
  void AppendCriteoRow(float label, const uint32_t* ranks, uint64_t random, std::string* out) const;

  SyntheticOptions options_;
  uint64_t keys_per_field_;
  std::vector<double> popularity_;  // by rank, normalised
  AliasTable sampler_;
  // Hidden model, indexed [field * keys_per_field + rank].
  static constexpr int kHiddenFactors = 4;
  std::vector<float> hidden_weight_;
  std::vector<float> hidden_factors_;  // kHiddenFactors per key
  double hidden_bias_ = -1.0;
  std::vector<uint32_t> token_salt_;  // per field, for Criteo tokens
};

}  // namespace libra::train
