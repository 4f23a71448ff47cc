#include "hotpath/worker/hot_split.h"

namespace libra::hotpath {

int ValuesOfKey(const ps::WorkerHotPath::Parts& push, std::size_t i) {
  if (!push.lens.empty()) return push.lens[i];
  return push.keys.empty() ? 0 : static_cast<int>(push.vals.size() / push.keys.size());
}

void SplitHotAndCold(const hot::HotSet& hot_set, const ps::WorkerHotPath::Parts& push,
                     ps::WorkerHotPath::Parts* hot, ps::WorkerHotPath::Parts* cold) {
  // Either part may take every key: sized once (an SArray grows by copying).
  for (ps::WorkerHotPath::Parts* part : {hot, cold}) {
    part->keys.reserve(part->keys.size() + push.keys.size());
    part->vals.reserve(part->vals.size() + push.vals.size());
  }
  hot->lens.reserve(hot->lens.size() + push.keys.size());
  if (!push.lens.empty()) cold->lens.reserve(cold->lens.size() + push.keys.size());
  std::size_t offset = 0;
  for (std::size_t i = 0; i < push.keys.size(); ++i) {
    hot_set.PrefetchAhead(push.keys.data(), push.keys.size(), i);
    const int len = ValuesOfKey(push, i);
    const std::uint32_t index = hot_set.Find(push.keys[i]);
    const bool is_hot = index != hot::HotSet::kCold &&
                        hot_set.keys()[index].value_len == static_cast<std::uint32_t>(len);
    ps::WorkerHotPath::Parts* to = is_hot ? hot : cold;
    to->keys.push_back(push.keys[i]);
    for (int j = 0; j < len; ++j) to->vals.push_back(push.vals[offset + j]);
    if (is_hot || !push.lens.empty()) to->lens.push_back(len);
    offset += static_cast<std::size_t>(len);
  }
}

}  // namespace libra::hotpath
