// A minibatch as a model sees it: rows of the data set with every feature
// pointing at a slot in the batch's own sorted list of parameter keys, which
// is exactly the key list a worker pulls from and pushes to the servers.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "data/dataset.h"
#include "data/feature_hash.h"

namespace libra::train {

using ParameterKey = uint64_t;

// Feature keys are scattered over the 64-bit key space (the servers split
// it into equal ranges); Mix64 is a bijection, so two features never share a
// parameter.
inline ParameterKey ParameterKeyOf(FeatureKey feature) { return Mix64(feature); }

// Dense model parameters (bias, MLP) live under keys of their own, scattered
// the same way. A feature key equal to kDenseKeyBase + i would collide; no
// reader produces such keys in practice (libsvm indices are small, Criteo
// keys are hashes).
inline constexpr uint64_t kDenseKeyBase = 0xd3a5e00000000000ULL;
inline ParameterKey DenseParameterKey(uint32_t i) { return Mix64(kDenseKeyBase + i); }
// The dense index of `key`, or -1 if it is a feature's key.
inline int64_t DenseIndexOf(ParameterKey key, uint32_t num_dense_keys) {
  const uint64_t offset = UnMix64(key) - kDenseKeyBase;
  return offset < num_dense_keys ? static_cast<int64_t>(offset) : -1;
}

struct Batch {
  std::vector<float> labels;
  std::vector<uint32_t> row_begin{0};
  std::vector<uint32_t> slots;        // per feature occurrence: index into keys
  std::vector<float> values;          // per feature occurrence
  std::vector<uint32_t> fields;       // per feature occurrence
  std::vector<ParameterKey> keys;     // sorted, unique: feature and dense keys
  std::vector<uint32_t> dense_slots;  // slot of DenseParameterKey(i)
  // MakeBatch's scratch space, kept to reuse its memory: (key, occurrence).
  std::vector<std::pair<ParameterKey, uint32_t>> key_order;

  size_t rows() const { return labels.size(); }
};

// Builds the batch of `rows` (indices into `data`) for a model with
// `num_dense_keys` dense keys. Reuses `batch`'s memory.
void MakeBatch(const Dataset& data, const std::vector<uint32_t>& rows, uint32_t num_dense_keys,
               Batch* batch);
// Same for the contiguous rows [begin, end).
void MakeBatch(const Dataset& data, size_t begin, size_t end, uint32_t num_dense_keys,
               Batch* batch);

}  // namespace libra::train
