#include "train/parameter_table.h"

#include <algorithm>
#include <cstring>

#include "train/feature_hash.h"

namespace libra::train {

ParameterTable::ParameterTable(const Model& model, const Optimizer& optimizer)
    : model_(model),
      optimizer_(optimizer),
      value_length_(model.value_length()),
      entry_length_(model.value_length() * (1 + optimizer.state_per_value())) {}

float* ParameterTable::Find(ParameterKey key) {
  auto [it, inserted] = index_.try_emplace(key, storage_.size());
  if (inserted) {
    storage_.resize(storage_.size() + entry_length_);
    float* entry = storage_.data() + it->second;
    model_.InitialValue(key, entry);
    optimizer_.InitState(entry, entry + value_length_, value_length_);
    return entry;
  }
  return storage_.data() + it->second;
}

void ParameterTable::Pull(const ParameterKey* keys, size_t count, float* out) {
  for (size_t i = 0; i < count; ++i) {
    const float* entry = Find(keys[i]);
    std::copy_n(entry, value_length_, out + i * value_length_);
  }
}

void ParameterTable::Push(const ParameterKey* keys, size_t count, const float* gradient_sum,
                          uint32_t contributors) {
  for (size_t i = 0; i < count; ++i) {
    float* entry = Find(keys[i]);
    optimizer_.Update(entry, entry + value_length_, gradient_sum + i * value_length_, contributors,
                      value_length_);
  }
}

uint64_t ParameterTable::Fingerprint() const {
  uint64_t sum = 0;
  for (const auto& [key, offset] : index_) {
    uint64_t entry = Mix64(key);
    for (uint32_t j = 0; j < value_length_; ++j) {
      uint32_t bits;
      std::memcpy(&bits, &storage_[offset + j], sizeof(bits));
      entry = Mix64(entry ^ bits);
    }
    sum += entry;  // addition commutes: the order of the hash map does not matter
  }
  return sum;
}

}  // namespace libra::train
