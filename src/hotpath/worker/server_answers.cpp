#include "hotpath/worker/server_answers.h"

#include <unordered_map>
#include <utility>

namespace libra::hotpath {

bool ValuesFromAnswers(const hot::HotSet& hot_set, std::span<const hot::Key> keys,
                       const std::vector<Repair>& answers, ps::WorkerHotPath::Parts* out,
                       std::string* error) {
  auto length_of = [&](hot::Key key) -> std::size_t {
    const std::uint32_t index = hot_set.Find(key);
    return index == hot::HotSet::kCold ? 0 : hot_set.keys()[index].value_len;
  };
  std::unordered_map<hot::Key, std::pair<const Repair*, std::size_t>> found;
  for (const Repair& answer : answers) {
    std::size_t offset = 0;
    for (hot::Key key : answer.keys) {
      found[key] = {&answer, offset};
      offset += length_of(key);
    }
  }
  out->keys.CopyFrom(keys.data(), keys.size());
  for (hot::Key key : keys) {
    const std::size_t len = length_of(key);
    auto it = found.find(key);
    if (it == found.end()) {
      *error = "no server answered for hot key " + std::to_string(key);
      return false;
    }
    const auto [answer, offset] = it->second;
    if (offset + len > answer->vals.size()) {
      *error = "a short answer for hot key " + std::to_string(key);
      return false;
    }
    for (std::size_t v = 0; v < len; ++v) out->vals.push_back(answer->vals[offset + v]);
    out->lens.push_back(static_cast<int>(len));
  }
  return true;
}

}  // namespace libra::hotpath
