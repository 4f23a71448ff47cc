#include "train/parameter_table.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>

#include "data/feature_hash.h"

namespace libra::train {

ParameterTable::ParameterTable(const Model& model, const Optimizer& optimizer)
    : model_(model),
      optimizer_(optimizer),
      value_length_(model.value_length()),
      entry_length_(model.value_length() * (1 + optimizer.state_per_value())) {}

void ParameterTable::FindAll(const ParameterKey* keys, size_t count) {
  // Loads started this many keys ahead have arrived by the time they are used.
  constexpr size_t kAhead = 8;
  entries_.resize(count);
  for (size_t i = 0; i < count; ++i) {
    if (i + kAhead < count) index_.Prefetch(keys[i + kAhead]);
    bool added = false;
    const size_t entry = index_.FindOrAdd(keys[i], &added);
    entries_[i] = entry * entry_length_;
    if (added) {
      keys_.push_back(keys[i]);
      storage_.resize(storage_.size() + entry_length_);
      float* values = Entry(entries_[i]);
      model_.InitialValue(keys[i], values);
      optimizer_.InitState(values, values + value_length_, value_length_);
    }
  }
}

void ParameterTable::Pull(const ParameterKey* keys, size_t count, float* out) {
  FindAll(keys, count);
  constexpr size_t kAhead = 4;
  for (size_t i = 0; i < count; ++i) {
    if (i + kAhead < count) __builtin_prefetch(Entry(entries_[i + kAhead]));
    std::copy_n(Entry(entries_[i]), value_length_, out + i * value_length_);
  }
}

void ParameterTable::Push(const ParameterKey* keys, size_t count, const float* gradient_sum,
                          uint32_t contributors, float* values_after) {
  FindAll(keys, count);
  constexpr size_t kAhead = 4;
  for (size_t i = 0; i < count; ++i) {
    if (i + kAhead < count) __builtin_prefetch(Entry(entries_[i + kAhead]), /*rw=*/1);
    float* entry = Entry(entries_[i]);
    optimizer_.Update(entry, entry + value_length_, gradient_sum + i * value_length_, contributors,
                      value_length_);
    if (values_after != nullptr)
      std::copy_n(entry, value_length_, values_after + i * value_length_);
  }
}

uint64_t ParameterTable::Fingerprint() const {
  uint64_t sum = 0;
  for (size_t e = 0; e < keys_.size(); ++e) {
    uint64_t entry = Mix64(keys_[e]);
    for (uint32_t j = 0; j < value_length_; ++j) {
      uint32_t bits;
      std::memcpy(&bits, &storage_[e * entry_length_ + j], sizeof(bits));
      entry = Mix64(entry ^ bits);
    }
    sum += entry;  // addition commutes: the order keys were created in does not matter
  }
  return sum;
}

void ParameterTable::Export(std::vector<ParameterKey>* keys, std::vector<float>* entries) const {
  // Sorted, so a checkpoint's bytes do not depend on the order keys were created in.
  std::vector<size_t> order(keys_.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return keys_[a] < keys_[b]; });
  keys->resize(order.size());
  entries->resize(order.size() * entry_length_);
  for (size_t i = 0; i < order.size(); ++i) {
    (*keys)[i] = keys_[order[i]];
    std::copy_n(storage_.data() + order[i] * entry_length_, entry_length_,
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
  index_.Clear();
  index_.Reserve(keys.size());
  keys_.clear();
  storage_.clear();
  for (size_t i = 0; i < keys.size(); ++i) {
    bool added = false;
    index_.FindOrAdd(keys[i], &added);
    if (!added)
      throw std::invalid_argument("parameter table: key " + std::to_string(keys[i]) +
                                  " given twice");
    keys_.push_back(keys[i]);
  }
  storage_.assign(entries.begin(), entries.end());
}

}  // namespace libra::train
