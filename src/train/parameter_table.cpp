#include "train/parameter_table.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

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

void ParameterTable::Export(std::vector<ParameterKey>* keys, std::vector<float>* entries) const {
  keys->clear();
  keys->reserve(index_.size());
  for (const auto& [key, offset] : index_) keys->push_back(key);
  // Sorted, so a checkpoint's bytes do not depend on the hash map's order.
  std::sort(keys->begin(), keys->end());
  entries->resize(keys->size() * entry_length_);
  for (size_t i = 0; i < keys->size(); ++i) {
    std::copy_n(storage_.data() + index_.at((*keys)[i]), entry_length_,
                entries->data() + i * entry_length_);
  }
}

void ParameterTable::Import(const std::vector<ParameterKey>& keys,
                            const std::vector<float>& entries) {
  if (entries.size() != keys.size() * entry_length_) {
    throw std::invalid_argument("parameter table: " + std::to_string(entries.size()) +
                                " floats for " + std::to_string(keys.size()) + " entries of " +
                                std::to_string(entry_length_));
  }
  index_.clear();
  index_.reserve(keys.size());
  storage_.assign(entries.begin(), entries.begin() + keys.size() * entry_length_);
  for (size_t i = 0; i < keys.size(); ++i) index_.emplace(keys[i], i * entry_length_);
}

}  // namespace libra::train
