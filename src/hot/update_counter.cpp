#include "hot/update_counter.h"

#include <algorithm>
#include <stdexcept>

#include "hot/space_saving_sketch.h"

namespace libra::hot {
namespace {

bool HeavierFirst(const KeyCount& a, const KeyCount& b) {
  return a.count != b.count ? a.count > b.count : a.key < b.key;
}

}  // namespace

UpdateCounter::UpdateCounter(size_t memory_budget_bytes)
    : max_exact_keys_(memory_budget_bytes / HotKeyTable<uint64_t>::kWorstBytesPerKey),
      sketch_counters_(memory_budget_bytes / SpaceSavingSketch::BytesPerCounter()) {
  if (sketch_counters_ == 0) {
    throw std::invalid_argument("update counter: a memory budget of " +
                                std::to_string(memory_budget_bytes) +
                                " bytes cannot hold a single counter");
  }
}

UpdateCounter::~UpdateCounter() = default;
UpdateCounter::UpdateCounter(UpdateCounter&&) noexcept = default;
UpdateCounter& UpdateCounter::operator=(UpdateCounter&&) noexcept = default;

uint64_t UpdateCounter::error_bound() const { return exact() ? 0 : sketch_->min_count(); }

size_t UpdateCounter::tracked_keys() const { return exact() ? exact_.size() : sketch_->size(); }

KeyCount UpdateCounter::Estimate(Key key) const {
  if (!exact()) return sketch_->Estimate(key);
  const uint64_t* count = exact_.Find(key);
  return KeyCount{key, count != nullptr ? *count : 0, 0};
}

std::vector<KeyCount> UpdateCounter::Counts() const {
  std::vector<KeyCount> counts;
  counts.reserve(tracked_keys());
  if (exact()) {
    exact_.ForEach([&](Key key, uint64_t count) { counts.push_back(KeyCount{key, count, 0}); });
  } else {
    sketch_->ForEach([&](const KeyCount& count) { counts.push_back(count); });
  }
  std::sort(counts.begin(), counts.end(), HeavierFirst);
  return counts;
}

void UpdateCounter::SwitchToSketch() {
  std::vector<KeyCount> counts;
  counts.reserve(exact_.size());
  exact_.ForEach([&](Key key, uint64_t count) { counts.push_back(KeyCount{key, count, 0}); });
  if (counts.size() > sketch_counters_) {
    std::nth_element(counts.begin(), counts.begin() + static_cast<ptrdiff_t>(sketch_counters_),
                     counts.end(), HeavierFirst);
    counts.resize(sketch_counters_);
  }
  exact_ = HotKeyTable<uint64_t>();  // give the exact table's memory back
  sketch_ = std::make_unique<SpaceSavingSketch>(sketch_counters_);
  sketch_->Seed(std::move(counts));
}

void UpdateCounter::AddToSketch(Key key, uint64_t weight) {
  sketch_->Add(key, weight);
  total_ += weight;
}

}  // namespace libra::hot
