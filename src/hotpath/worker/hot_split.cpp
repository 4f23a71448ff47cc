#include "hotpath/worker/hot_split.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace libra::hotpath {

int ValuesOfKey(const ps::WorkerHotPath::Parts& push, std::size_t i) {
  if (!push.lens.empty()) return push.lens[i];
  return push.keys.empty() ? 0 : static_cast<int>(push.vals.size() / push.keys.size());
}

void SplitHotAndCold(const hot::HotSet& hot_set, const ps::WorkerHotPath::Parts& push,
                     ps::WorkerHotPath::Parts* hot, ps::WorkerHotPath::Parts* cold,
                     std::vector<hot::HotSet::Entry>* hot_entries) {
  SplitHotAndCold(hot_set.LookupAll(std::span<const hot::Key>(push.keys.data(), push.keys.size())),
                  push, hot, cold, hot_entries);
}

void SplitHotAndCold(std::span<const hot::HotSet::Entry> entries,
                     const ps::WorkerHotPath::Parts& push, ps::WorkerHotPath::Parts* hot,
                     ps::WorkerHotPath::Parts* cold, std::vector<hot::HotSet::Entry>* hot_entries) {
  if (entries.size() != push.keys.size()) {
    throw std::invalid_argument("hot split: " + std::to_string(entries.size()) + " entries for " +
                                std::to_string(push.keys.size()) + " keys");
  }
  // Either part may take every key: sized once (an SArray grows by copying).
  for (ps::WorkerHotPath::Parts* part : {hot, cold}) {
    part->keys.reserve(part->keys.size() + push.keys.size());
    part->vals.reserve(part->vals.size() + push.vals.size());
  }
  hot->lens.reserve(hot->lens.size() + push.keys.size());
  if (!push.lens.empty()) cold->lens.reserve(cold->lens.size() + push.keys.size());
  if (hot_entries != nullptr) hot_entries->reserve(hot_entries->size() + push.keys.size());
  std::size_t offset = 0;
  for (std::size_t i = 0; i < push.keys.size(); ++i) {
    const int len = ValuesOfKey(push, i);
    const hot::HotSet::Entry entry = entries[i];
    const bool is_hot =
        entry.index != hot::HotSet::kCold && entry.value_len == static_cast<std::uint32_t>(len);
    ps::WorkerHotPath::Parts* to = is_hot ? hot : cold;
    to->keys.push_back(push.keys[i]);
    for (int j = 0; j < len; ++j) to->vals.push_back(push.vals[offset + j]);
    if (is_hot || !push.lens.empty()) to->lens.push_back(len);
    if (is_hot && hot_entries != nullptr) hot_entries->push_back(entry);
    offset += static_cast<std::size_t>(len);
  }
}

std::span<const hot::HotSet::Entry> PulledKeys::Classify(const hot::HotSet& hot_set,
                                                         std::span<const hot::Key> keys) {
  if (keys.size() <= kMostKeysKept) {
    hot_set_ = &hot_set;
    keys_.assign(keys.begin(), keys.end());
  } else {
    hot_set_ = nullptr;
    keys_ = {};
  }
  entries_ = hot_set.LookupAll(keys);
  return entries_;
}

std::optional<std::span<const hot::HotSet::Entry>> PulledKeys::EntriesOf(
    const hot::HotSet& hot_set, std::span<const hot::Key> keys) const {
  if (&hot_set != hot_set_ || !std::equal(keys.begin(), keys.end(), keys_.begin(), keys_.end())) {
    return std::nullopt;
  }
  return std::span<const hot::HotSet::Entry>(entries_);
}

}  // namespace libra::hotpath
