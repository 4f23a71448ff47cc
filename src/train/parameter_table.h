// Key -> (values, optimizer state): what a server keeps for its key range,
// and what the single-process trainer uses in place of the servers. Keys are
// created on first touch with the model's initial values.
#pragma once

#include <cstdint>
#include <vector>

#include "train/key_index.h"
#include "train/model.h"
#include "train/optimizer.h"

namespace libra::train {

class ParameterTable {
 public:
  ParameterTable(const Model& model, const Optimizer& optimizer);

  uint32_t value_length() const { return value_length_; }
  size_t size() const { return keys_.size(); }

  // Copies the value_length() values of each of the `count` keys to `out`.
  void Pull(const ParameterKey* keys, size_t count, float* out);
  // One optimizer step per key from the sum of `contributors` workers'
  // gradients. `values_after`, when given, takes each key's values after
  // its step, as Pull would give them (the key is looked up once for both).
  void Push(const ParameterKey* keys, size_t count, const float* gradient_sum,
            uint32_t contributors, float* values_after = nullptr);

  // A hash of every key and the bits of its values, independent of the order
  // keys were created in: two tables with the same model give the same number.
  uint64_t Fingerprint() const;

  // Checkpoints: floats per key (values, then optimizer state).
  uint32_t entry_length() const { return entry_length_; }
  // Every key, ascending, with its entry (entry_length() floats per key).
  void Export(std::vector<ParameterKey>* keys, std::vector<float>* entries) const;
  // Replaces the whole table by `keys` and their entries (as Export gives them).
  void Import(const std::vector<ParameterKey>& keys, const std::vector<float>& entries);

 private:
  // Puts in entries_ the storage offset of each key (creating missing ones):
  // values, followed by the optimizer state. Prefetches ahead.
  void FindAll(const ParameterKey* keys, size_t count);
  float* Entry(size_t offset) { return storage_.data() + offset; }

  const Model& model_;
  const Optimizer& optimizer_;
  uint32_t value_length_;
  uint32_t entry_length_;
  KeyIndex index_;                  // key -> entry number
  std::vector<ParameterKey> keys_;  // entry number -> key
  std::vector<float> storage_;      // entry_length_ floats per entry, by entry number
  std::vector<size_t> entries_;     // FindAll's answer
};

}  // namespace libra::train
