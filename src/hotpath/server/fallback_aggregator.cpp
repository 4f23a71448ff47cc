#include "hotpath/server/fallback_aggregator.h"

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace libra::hotpath {

FallbackAggregator::FallbackAggregator(std::shared_ptr<const hot::HotSet> hot_set,
                                       std::span<const hot::Key> owned_keys,
                                       std::uint32_t num_workers, int scale_bits)
    : hot_set_(std::move(hot_set)),
      num_workers_(num_workers),
      codec_(scale_bits),
      owned_(owned_keys.begin(), owned_keys.end()) {
  if (num_workers_ == 0) throw std::invalid_argument("fallback: no workers");
  std::sort(owned_.begin(), owned_.end());
  if (std::adjacent_find(owned_.begin(), owned_.end()) != owned_.end()) {
    throw std::invalid_argument("fallback: an owned key is listed twice");
  }
  offset_.push_back(0);
  for (const hot::Key key : owned_) {
    const std::uint32_t index = hot_set_->Find(key);
    if (index == hot::HotSet::kCold) {
      throw std::invalid_argument("fallback: owned key " + std::to_string(key) + " is not hot");
    }
    offset_.push_back(offset_.back() + hot_set_->keys()[index].value_len);
  }
}

std::optional<CollectedEpoch> FallbackAggregator::Add(std::uint32_t epoch, std::uint32_t worker,
                                                      std::span<const hot::Key> keys,
                                                      std::span<const float> vals,
                                                      std::string* error) {
  auto refuse = [&](const std::string& why) -> std::optional<CollectedEpoch> {
    if (error != nullptr) *error = why;
    return std::nullopt;
  };
  if (error != nullptr) error->clear();
  if (forgotten_through_ && epoch <= *forgotten_through_) {
    return refuse("epoch " + std::to_string(epoch) + " is already applied");
  }
  if (worker >= num_workers_) return refuse("worker " + std::to_string(worker) + " out of range");
  // Checked before anything is added, so a refused push leaves no trace.
  std::vector<std::size_t> positions;  // in owned_
  std::size_t values = 0;
  for (const hot::Key key : keys) {
    const auto it = std::lower_bound(owned_.begin(), owned_.end(), key);
    if (it == owned_.end() || *it != key) {
      return refuse("key " + std::to_string(key) + " is not a hot key of this server");
    }
    positions.push_back(static_cast<std::size_t>(it - owned_.begin()));
    values += offset_[positions.back() + 1] - offset_[positions.back()];
  }
  if (values != vals.size()) {
    return refuse(std::to_string(vals.size()) + " values for keys that take " +
                  std::to_string(values));
  }
  std::vector<std::size_t> sorted = positions;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    return refuse("a key is pushed twice");
  }
  EpochSums& sums = epochs_[epoch];
  if (sums.from_worker.empty()) {
    sums.from_worker.assign(num_workers_, false);
    sums.sums.assign(offset_.back(), 0);
    sums.written.assign(owned_.size(), false);
    sums.saturated.assign(owned_.size(), false);
  }
  if (sums.from_worker[worker]) {
    return refuse("worker " + std::to_string(worker) + " pushed epoch " + std::to_string(epoch) +
                  " twice");
  }
  sums.from_worker[worker] = true;
  std::size_t value = 0;
  for (const std::size_t position : positions) {
    sums.written[position] = true;
    for (std::uint32_t cell = offset_[position]; cell < offset_[position + 1]; ++cell) {
      // The switch's convert and aggregate stages, value by value: a rejected
      // value (infinity, NaN) adds nothing and flags the key; a saturated
      // conversion or sum is clamped and flagged.
      const dataplane::FixedValue fixed =
          codec_.ToFixed(std::bit_cast<std::uint32_t>(vals[value++]));
      if (fixed.status != dataplane::ConversionStatus::kOk) sums.saturated[position] = true;
      if (fixed.status == dataplane::ConversionStatus::kRejected) continue;
      const dataplane::SaturatingSum sum = dataplane::SaturatingAdd(sums.sums[cell], fixed.value);
      sums.sums[cell] = sum.value;
      if (sum.saturated) sums.saturated[position] = true;
    }
  }
  if (++sums.workers_in < num_workers_) return std::nullopt;
  CollectedEpoch done = Finish(epoch, sums);
  epochs_.erase(epoch);
  return done;
}

CollectedEpoch FallbackAggregator::Finish(std::uint32_t epoch, const EpochSums& sums) const {
  CollectedEpoch out;
  out.epoch = epoch;
  out.status = HotPathStatus::kOk;
  out.num_merged = num_workers_;
  for (std::size_t i = 0; i < owned_.size(); ++i) {
    if (!sums.written[i]) continue;  // the switch returns written cells only
    out.keys.push_back(owned_[i]);
    out.lens.push_back(static_cast<int>(offset_[i + 1] - offset_[i]));
    for (std::uint32_t cell = offset_[i]; cell < offset_[i + 1]; ++cell) {
      out.vals.push_back(std::bit_cast<float>(codec_.ToFloatBits(sums.sums[cell])));
    }
    if (sums.saturated[i]) out.saturated_keys.push_back(owned_[i]);
  }
  return out;
}

void FallbackAggregator::Forget(std::uint32_t epoch) {
  if (!forgotten_through_ || epoch > *forgotten_through_) forgotten_through_ = epoch;
  epochs_.erase(epochs_.begin(), epochs_.upper_bound(epoch));
}

}  // namespace libra::hotpath
