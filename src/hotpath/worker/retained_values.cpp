#include "hotpath/worker/retained_values.h"

#include <unordered_set>

namespace libra::hotpath {

void RetainedValues::Keep(RetainedPush push) {
  pushes_.push_back(std::move(push));
  if (pushes_.size() > kEpochsKept) pushes_.pop_front();
}

std::optional<RetainedPush> RetainedValues::Find(std::uint32_t epoch) const {
  for (const RetainedPush& push : pushes_) {
    if (push.epoch == epoch) return push;
  }
  return std::nullopt;
}

FallbackPush ValuesOfKeys(const RetainedPush* kept, std::uint32_t worker,
                          std::span<const hot::Key> keys) {
  FallbackPush out;
  out.worker = worker;
  out.epoch = FallbackPush::kNotRetained;
  if (kept == nullptr) return out;
  out.epoch = kept->epoch;
  const std::unordered_set<hot::Key> wanted(keys.begin(), keys.end());
  std::size_t offset = 0;
  for (std::size_t i = 0; i < kept->keys.size(); ++i) {
    const std::size_t len = static_cast<std::size_t>(kept->lens[i]);
    if (wanted.count(kept->keys[i]) != 0) {
      out.keys.push_back(kept->keys[i]);
      out.vals.insert(out.vals.end(), kept->vals.begin() + offset,
                      kept->vals.begin() + offset + len);
    }
    offset += len;
  }
  return out;
}

}  // namespace libra::hotpath
