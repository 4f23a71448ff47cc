#include "hotpath/server/saturated_sums.h"

#include <algorithm>
#include <unordered_map>

#include "hotpath/server/exact_sum.h"

namespace libra::hotpath {

bool EveryWorkerAnswered(const std::vector<FallbackPush>& answers, std::uint32_t num_workers) {
  return answers.size() == num_workers &&
         std::none_of(answers.begin(), answers.end(),
                      [](const FallbackPush& a) { return a.epoch == FallbackPush::kNotRetained; });
}

std::uint64_t SumSaturatedExactly(const hot::HotSet& hot_set, int scale_bits,
                                  const std::vector<FallbackPush>& answers, CollectedEpoch* epoch) {
  std::unordered_map<hot::Key, std::vector<ExactSum>> sums;
  for (hot::Key key : epoch->saturated_keys) {
    const std::uint32_t len = hot_set.Lookup(key).value_len;
    sums.emplace(key, std::vector<ExactSum>(len, ExactSum(scale_bits)));
  }
  for (const FallbackPush& answer : answers) {
    std::size_t offset = 0;
    for (hot::Key key : answer.keys) {
      // An answer may hold other keys too (the sum check asks for more).
      const std::uint32_t index = hot_set.Find(key);
      if (index == hot::HotSet::kCold) break;  // unreadable from here on
      const std::size_t len = hot_set.keys()[index].value_len;
      if (offset + len > answer.vals.size()) break;
      auto it = sums.find(key);
      if (it != sums.end()) {
        for (std::size_t v = 0; v < len; ++v) it->second[v].Add(answer.vals[offset + v]);
      }
      offset += len;
    }
  }
  std::uint64_t wide = 0;
  std::size_t offset = 0;
  for (std::size_t i = 0; i < epoch->keys.size(); ++i) {
    const std::size_t len = static_cast<std::size_t>(epoch->lens[i]);
    auto it = sums.find(epoch->keys[i]);
    if (it != sums.end()) {
      for (std::size_t v = 0; v < len; ++v) {
        epoch->vals[offset + v] = it->second[v].Value();
        wide += it->second[v].wide();
      }
    }
    offset += len;
  }
  return wide;
}

}  // namespace libra::hotpath
