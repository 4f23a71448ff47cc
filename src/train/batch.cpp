#include "train/batch.h"

#include <algorithm>
#include <numeric>

namespace libra::train {
namespace {

template <typename RowRange>
void BuildBatch(const Dataset& data, const RowRange& rows, uint32_t num_dense_keys, Batch* batch) {
  batch->labels.clear();
  batch->row_begin.assign(1, 0);
  batch->values.clear();
  batch->fields.clear();
  batch->keys.clear();
  for (size_t r : rows) {
    for (uint64_t i = data.row_begin[r]; i < data.row_begin[r + 1]; ++i) {
      batch->keys.push_back(ParameterKeyOf(data.keys[i]));
      batch->values.push_back(data.values[i]);
      batch->fields.push_back(data.fields[i]);
    }
    batch->labels.push_back(data.labels[r]);
    batch->row_begin.push_back(static_cast<uint32_t>(batch->keys.size()));
  }
  // Occurrence keys (in row order) -> sorted unique keys + slot per occurrence.
  const std::vector<ParameterKey> occurrence_keys = batch->keys;
  for (uint32_t i = 0; i < num_dense_keys; ++i) batch->keys.push_back(DenseParameterKey(i));
  std::sort(batch->keys.begin(), batch->keys.end());
  batch->keys.erase(std::unique(batch->keys.begin(), batch->keys.end()), batch->keys.end());
  auto slot_of = [&](ParameterKey key) {
    return static_cast<uint32_t>(std::lower_bound(batch->keys.begin(), batch->keys.end(), key) -
                                 batch->keys.begin());
  };
  batch->slots.resize(occurrence_keys.size());
  for (size_t i = 0; i < occurrence_keys.size(); ++i) batch->slots[i] = slot_of(occurrence_keys[i]);
  batch->dense_slots.resize(num_dense_keys);
  for (uint32_t i = 0; i < num_dense_keys; ++i)
    batch->dense_slots[i] = slot_of(DenseParameterKey(i));
}

}  // namespace

void MakeBatch(const Dataset& data, const std::vector<uint32_t>& rows, uint32_t num_dense_keys,
               Batch* batch) {
  BuildBatch(data, rows, num_dense_keys, batch);
}

void MakeBatch(const Dataset& data, size_t begin, size_t end, uint32_t num_dense_keys,
               Batch* batch) {
  std::vector<uint32_t> rows(end - begin);
  std::iota(rows.begin(), rows.end(), static_cast<uint32_t>(begin));
  BuildBatch(data, rows, num_dense_keys, batch);
}

}  // namespace libra::train
