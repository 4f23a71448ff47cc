#include "hotpath/server/published_values.h"

#include <algorithm>

namespace libra::hotpath {

void PublishedValues::Reset(const hot::HotSet& hot_set, std::vector<hot::Key> owned) {
  keys_ = std::move(owned);
  lens_.clear();
  offsets_.clear();
  values_.clear();
  num_values_ = 0;
  position_of_index_.assign(hot_set.size(), kNotOwned);
  for (hot::Key key : keys_) {
    const hot::HotSet::Entry entry = hot_set.Lookup(key);
    if (entry.index != hot::HotSet::kCold) {
      position_of_index_[entry.index] = static_cast<std::uint32_t>(offsets_.size());
    }
    const int len = static_cast<int>(entry.value_len);
    offsets_.push_back(num_values_);
    lens_.push_back(len);
    num_values_ += static_cast<std::size_t>(len);
  }
}

bool PublishedValues::SetAll(std::span<const float> values) {
  if (values.size() != num_values_) return false;
  values_.assign(values.begin(), values.end());
  return true;
}

void PublishedValues::Update(std::span<const hot::HotSet::Entry> entries, std::span<const int> lens,
                             std::span<const float> values) {
  std::size_t from = 0;
  for (std::size_t i = 0; i < entries.size() && i < lens.size(); ++i) {
    const std::size_t len = static_cast<std::size_t>(lens[i]);
    const std::uint32_t at = entries[i].index < position_of_index_.size()
                                 ? position_of_index_[entries[i].index]
                                 : kNotOwned;
    if (at != kNotOwned && current() && len == static_cast<std::size_t>(lens_[at]) &&
        from + len <= values.size()) {
      std::copy_n(values.begin() + from, len, values_.begin() + offsets_[at]);
    }
    from += len;
  }
}

void PublishedValues::Fill(std::span<const hot::Key> keys, Repair* answer) const {
  if (!current()) return;
  for (hot::Key key : keys) {
    const std::size_t i = IndexOf(key);
    if (i == keys_.size()) continue;
    answer->keys.push_back(key);
    const auto first = values_.begin() + offsets_[i];
    answer->vals.insert(answer->vals.end(), first, first + lens_[i]);
  }
}

std::size_t PublishedValues::IndexOf(hot::Key key) const {
  const auto at = std::lower_bound(keys_.begin(), keys_.end(), key);
  return at != keys_.end() && *at == key ? static_cast<std::size_t>(at - keys_.begin())
                                         : keys_.size();
}

}  // namespace libra::hotpath
