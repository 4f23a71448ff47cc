#include "hotpath/hot_replica.h"

#include <bit>
#include <stdexcept>
#include <string>

namespace libra::hotpath {

HotReplica::HotReplica(const hot::HotSet& hot_set)
    : hot_set_(hot_set),
      first_value_(hot_set.size() + 1, 0),
      values_(hot_set.num_values(), 0.0f),
      tags_(hot_set.num_values(), 0) {
  for (std::size_t k = 0; k < hot_set.size(); ++k) {
    first_value_[k + 1] = first_value_[k] + hot_set.keys()[k].value_len;
  }
  if (!values_.empty()) cells_per_tag_[0] = values_.size();
}

bool HotReplica::Store(std::uint64_t value_index, std::uint32_t tag, float value) {
  std::uint32_t& held = tags_[value_index];
  if (held >= tag) return false;
  auto old = cells_per_tag_.find(held);
  if (--old->second == 0) cells_per_tag_.erase(old);
  ++cells_per_tag_[tag];
  held = tag;
  values_[value_index] = value;
  return true;
}

HotReplica::ApplyResult HotReplica::Apply(std::uint32_t epoch, std::span<const wire::Slot> slots) {
  ApplyResult result;
  const std::uint32_t num_arrays = hot_set_.layout().num_arrays;
  for (std::size_t j = 0; j < slots.size(); ++j) {
    const wire::Slot& slot = slots[j];
    if (!slot.valid) continue;
    const auto owner =
        j < num_arrays
            ? hot_set_.OwnerOf(hot::CellAddress{static_cast<std::uint32_t>(j), slot.index})
            : std::nullopt;
    if (!owner) {
      ++result.unknown;
      continue;
    }
    const bool advanced = Store(first_value_[owner->key_index] + owner->offset, epoch + 1,
                                std::bit_cast<float>(slot.value));
    advanced ? ++result.advanced : ++result.stale;
  }
  return result;
}

HotReplica::ApplyResult HotReplica::ApplyKeys(std::uint32_t epoch, std::span<const hot::Key> keys,
                                              std::span<const float> vals) {
  ApplyResult result;
  std::size_t position = 0;
  for (const hot::Key key : keys) {
    const std::uint32_t index = hot_set_.Find(key);
    if (index == hot::HotSet::kCold) {
      throw std::invalid_argument("replica: key " + std::to_string(key) + " is not hot");
    }
    const std::uint32_t len = hot_set_.keys()[index].value_len;
    if (position + len > vals.size()) {
      throw std::invalid_argument("replica: fewer values than the keys take");
    }
    for (std::uint32_t v = 0; v < len; ++v) {
      const bool advanced = Store(first_value_[index] + v, epoch + 1, vals[position++]);
      advanced ? ++result.advanced : ++result.stale;
    }
  }
  if (position != vals.size()) {
    throw std::invalid_argument("replica: more values than the keys take");
  }
  return result;
}

std::optional<std::uint32_t> HotReplica::MinEpoch() const {
  if (cells_per_tag_.empty() || cells_per_tag_.begin()->first == 0) return std::nullopt;
  return cells_per_tag_.begin()->first - 1;
}

std::optional<std::uint32_t> HotReplica::MaxEpoch() const {
  if (cells_per_tag_.empty() || cells_per_tag_.rbegin()->first == 0) return std::nullopt;
  return cells_per_tag_.rbegin()->first - 1;
}

bool HotReplica::Reached(std::span<const hot::Key> keys, std::optional<std::uint32_t> epoch) const {
  const std::uint32_t needed = epoch ? *epoch + 1 : 1;
  for (const hot::Key key : keys) {
    const std::uint32_t index = hot_set_.Find(key);
    for (std::uint64_t i = first_value_[index]; i < first_value_[index + 1]; ++i) {
      if (tags_[i] < needed) return false;
    }
  }
  return true;
}

void HotReplica::Read(std::span<const hot::Key> keys, std::vector<float>* vals,
                      std::vector<int>* lens) const {
  for (const hot::Key key : keys) {
    const std::uint32_t index = hot_set_.Find(key);
    vals->insert(vals->end(), values_.begin() + static_cast<std::ptrdiff_t>(first_value_[index]),
                 values_.begin() + static_cast<std::ptrdiff_t>(first_value_[index + 1]));
    if (lens != nullptr) lens->push_back(static_cast<int>(hot_set_.keys()[index].value_len));
  }
}

std::vector<hot::Key> HotReplica::MissingKeys(std::uint32_t epoch) const {
  std::vector<hot::Key> missing;
  for (std::size_t k = 0; k < hot_set_.size(); ++k) {
    for (std::uint64_t i = first_value_[k]; i < first_value_[k + 1]; ++i) {
      if (tags_[i] < epoch + 1) {
        missing.push_back(hot_set_.keys()[k].key);
        break;
      }
    }
  }
  return missing;
}

}  // namespace libra::hotpath
