// Sparse training data in memory, and the one entry point that reads it from
// disk whatever its format (libsvm text, Criteo TSV, or Libra's binary cache).
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace libra::train {

using FeatureKey = uint64_t;

// A sparse data set in CSR form. Row r's features are [row_begin[r], row_begin[r+1]).
struct Dataset {
  std::vector<float> labels;        // 0 or 1 (libsvm -1/+1 mapped to 0/1)
  std::vector<uint64_t> row_begin;  // rows()+1 entries, row_begin[0] == 0
  std::vector<FeatureKey> keys;     // one per feature occurrence
  std::vector<float> values;        // feature value (1.0 for categorical)
  std::vector<uint32_t> fields;     // field id per feature occurrence
  uint32_t num_fields = 0;

  Dataset() : row_begin{0} {}
  size_t rows() const { return labels.size(); }
  size_t nonzeros() const { return keys.size(); }

  void AddFeature(FeatureKey key, float value, uint32_t field) {
    keys.push_back(key);
    values.push_back(value);
    fields.push_back(field);
  }
  // Closes the row whose features were added since the last call.
  void EndRow(float label) {
    labels.push_back(label);
    row_begin.push_back(keys.size());
  }
  // Drops the features added since the last EndRow (a line that turned out bad).
  void AbandonRow() {
    keys.resize(row_begin.back());
    values.resize(row_begin.back());
    fields.resize(row_begin.back());
  }
  // Appends row r of `other`.
  void AppendRow(const Dataset& other, size_t r);
};

struct ReadOptions {
  bool skip_bad_lines = false;  // otherwise the first bad line throws DataError("file:line: what")
  int shard = 0, num_shards = 1;  // this worker's share of the rows
  bool use_cache = true;  // binary cache next to the file (PATH.libracache), rebuilt when stale
};

struct ReadStats {
  uint64_t lines = 0, bad_lines = 0;
  uint64_t rows = 0;  // valid rows in the whole file, all shards together
  bool from_cache = false;
  std::string first_bad_line;  // "file:line: what" of the first skipped line
  // Why the cache next to the file could not be used and was rebuilt from the
  // text (damaged, truncated, another version); "" when it was fine or absent.
  std::string cache_problem;
};

class DataError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class DataFormat { kLibsvm, kCriteo, kBinaryCache };

// Looks at the first bytes of the file: the cache magic, a tab (Criteo TSV),
// otherwise libsvm.
DataFormat DetectFormat(const std::string& path);

// Detects the format (binary cache, Criteo TSV, libsvm) and reads it.
// Rows are dealt to shards round-robin by their index among the valid rows,
// so every shard sees the same mix whatever order the file is in, and the
// split does not depend on whether the cache was used.
Dataset ReadDataset(const std::string& path, const ReadOptions& options = {},
                    ReadStats* stats = nullptr);

// Rows [begin, end) of `data` (used for held-out splits).
Dataset SliceRows(const Dataset& data, size_t begin, size_t end);

}  // namespace libra::train
