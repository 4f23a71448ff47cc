#include "hotpath/server/switch_sum_check.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "hotpath/server/fallback_aggregator.h"

namespace libra::hotpath {

SwitchSumCheck::SwitchSumCheck(std::shared_ptr<const hot::HotSet> hot_set,
                               std::uint32_t num_workers, const UpdateKey& key, int scale_bits)
    : hot_set_(std::move(hot_set)),
      num_workers_(num_workers),
      scale_bits_(scale_bits),
      check_(key, scale_bits) {
  if (num_workers_ == 0) throw std::invalid_argument("sum check: no workers");
}

bool SwitchSumCheck::AddTerm(std::uint32_t epoch, std::uint32_t worker, std::uint64_t term) {
  if (worker >= num_workers_ || term >= SumCheck::kPrime) return false;
  if (forgotten_through_ && epoch <= *forgotten_through_) return false;
  auto it = terms_.find(epoch);
  if (it == terms_.end()) {
    if (terms_.size() >= kMaxPendingEpochs) return false;
    it = terms_.emplace(epoch, std::vector<std::optional<std::uint64_t>>(num_workers_)).first;
  }
  if (it->second[worker]) return false;
  it->second[worker] = term;
  return true;
}

bool SwitchSumCheck::HasAllTerms(std::uint32_t epoch) const {
  const auto it = terms_.find(epoch);
  return it != terms_.end() && std::all_of(it->second.begin(), it->second.end(),
                                           [](const auto& term) { return term.has_value(); });
}

std::vector<hot::Key> SwitchSumCheck::KeysToSumFromValues(const CollectedEpoch& epoch) const {
  std::vector<hot::Key> keys(epoch.saturated_keys.begin(), epoch.saturated_keys.end());
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

bool SwitchSumCheck::Check(CollectedEpoch* epoch, std::span<const hot::Key> from_values,
                           const std::vector<FallbackPush>& answers) const {
  const auto terms = terms_.find(epoch->epoch);
  if (terms == terms_.end() || !HasAllTerms(epoch->epoch)) return false;
  if (epoch->fixed.size() != epoch->vals.size()) return false;
  std::uint64_t expected = 0;
  for (const std::optional<std::uint64_t>& term : terms->second) {
    expected = SumCheck::Add(expected, *term);
  }

  // The keys from the workers' values: the switch's arithmetic for the sums
  // that replace the switch's, their exact terms for the check (the check is
  // linear: the sum of the workers' terms of a key is the term of its sum).
  const SumCheck::Epoch coefficients = check_.ForEpoch(epoch->epoch);
  std::uint64_t found = 0;
  CollectedEpoch summed;
  if (!from_values.empty()) {
    FallbackAggregator aggregator(hot_set_, from_values, num_workers_, scale_bits_);
    std::optional<CollectedEpoch> done;
    for (const FallbackPush& answer : answers) {
      if (answer.epoch != epoch->epoch) return false;
      std::string refused;
      done = aggregator.Add(epoch->epoch, answer.worker, answer.keys, answer.vals, &refused);
      if (!refused.empty()) return false;
      // The aggregator took it: its keys are owned and its values fit them.
      const std::span<const float> vals(answer.vals);
      std::size_t v = 0;
      for (const hot::Key key : answer.keys) {
        const std::size_t len = hot_set_->Lookup(key).value_len;
        found = SumCheck::Add(found, coefficients.KeyTerm(key, vals.subspan(v, len)));
        v += len;
      }
    }
    if (!done) return false;  // some worker's answer is missing or refused
    summed = std::move(*done);
  }

  // No key summed from values (the common case): the switch's sums stand as
  // they are, so only their terms are added, and the epoch is not copied.
  if (from_values.empty()) {
    std::size_t offset = 0;
    for (std::size_t i = 0; i < epoch->keys.size(); ++i) {
      const std::size_t len = static_cast<std::size_t>(epoch->lens[i]);
      AddSwitchTerms(coefficients, epoch->keys[i],
                     std::span<const std::int32_t>(epoch->fixed).subspan(offset, len), &found);
      offset += len;
    }
    return found == expected;
  }

  // Put the summed keys in place of the switch's, and add the terms of the
  // switch's other sums.
  CollectedEpoch out;
  out.epoch = epoch->epoch;
  out.status = epoch->status;
  out.num_merged = epoch->num_merged;
  out.from_switch = epoch->from_switch;
  std::size_t offset = 0, next_summed = 0, summed_offset = 0;
  for (std::size_t i = 0; i < epoch->keys.size(); ++i) {
    const hot::Key key = epoch->keys[i];
    const std::size_t len = static_cast<std::size_t>(epoch->lens[i]);
    if (std::binary_search(from_values.begin(), from_values.end(), key)) {
      // FallbackAggregator gives its written keys ascending, as `epoch` has them.
      if (next_summed < summed.keys.size() && summed.keys[next_summed] < key) {
        return false;  // a key the workers pushed that the switch's epoch lacks
      }
      if (next_summed < summed.keys.size() && summed.keys[next_summed] == key) {
        out.keys.push_back(key);
        out.lens.push_back(summed.lens[next_summed]);
        out.vals.insert(out.vals.end(), summed.vals.begin() + summed_offset,
                        summed.vals.begin() + summed_offset + summed.lens[next_summed]);
        summed_offset += summed.lens[next_summed];
        ++next_summed;
      }  // else no worker pushed it: it leaves the epoch
    } else {
      AddSwitchTerms(coefficients, key,
                     std::span<const std::int32_t>(epoch->fixed).subspan(offset, len), &found);
      out.keys.push_back(key);
      out.lens.push_back(epoch->lens[i]);
      out.vals.insert(out.vals.end(), epoch->vals.begin() + offset,
                      epoch->vals.begin() + offset + len);
    }
    offset += len;
  }
  if (next_summed != summed.keys.size()) return false;  // as above
  out.saturated_keys = summed.saturated_keys;
  *epoch = std::move(out);
  return found == expected;
}

void SwitchSumCheck::AddSwitchTerms(const SumCheck::Epoch& coefficients, hot::Key key,
                                    std::span<const std::int32_t> sums, std::uint64_t* found) {
  for (std::size_t j = 0; j < sums.size(); ++j) {
    *found = SumCheck::Add(*found, coefficients.Term(key, static_cast<std::uint32_t>(j), sums[j]));
  }
}

void SwitchSumCheck::Forget(std::uint32_t epoch) {
  if (!forgotten_through_ || epoch > *forgotten_through_) forgotten_through_ = epoch;
  terms_.erase(terms_.begin(), terms_.upper_bound(epoch));
}

}  // namespace libra::hotpath
