#include "train/bsp_round.h"

#include <algorithm>
#include <functional>

#include "train/key_index.h"

namespace libra::train {

BspRound::BspRound(uint32_t expected_contributions, uint32_t value_length)
    : expected_(expected_contributions), value_length_(value_length) {}

bool BspRound::Add(int sender, uint32_t num_merged, const ps::SArray<ps::Key>& keys,
                   const ps::SArray<float>& gradients) {
  if (contributions_ + num_merged > expected_) return false;
  auto at = std::lower_bound(pushes_.begin(), pushes_.end(), sender,
                             [](const Push& p, int s) { return p.sender < s; });
  if (at != pushes_.end() && at->sender == sender) return false;
  pushes_.insert(at, Push{sender, keys, gradients});
  contributions_ += num_merged;
  return true;
}

void BspRound::Merge(std::vector<ps::Key>* keys, std::vector<float>* sums) const {
  keys->clear();
  sums->clear();
  // The cursor merge passes over the running sums once per push: faster than
  // the hash table for one push (the switch's round) or two, slower from
  // four (train_bench's BM_BspRoundMerge).
  constexpr size_t kMostPushesByCursor = 2;
  const bool by_cursor = pushes_.size() <= kMostPushesByCursor &&
                         std::all_of(pushes_.begin(), pushes_.end(), [](const Push& p) {
                           return std::adjacent_find(p.keys.begin(), p.keys.end(),
                                                     std::greater_equal<ps::Key>()) == p.keys.end();
                         });
  if (by_cursor) {
    MergeAscending(keys, sums);
  } else {
    MergeByHash(keys, sums);
  }
}

// Pushes whose keys ascend (as PS-lite asks of every push) are merged
// without a hash table: the first push, then each next sender's merged into
// the running sums by two cursors. So each sum is added up in ascending
// sender order, as MergeByHash adds it, and the keys come out ascending.
void BspRound::MergeAscending(std::vector<ps::Key>* keys, std::vector<float>* sums) const {
  const size_t length = value_length_;
  if (pushes_.empty()) return;
  const Push& first = pushes_.front();
  keys->assign(first.keys.begin(), first.keys.end());
  sums->resize(first.gradients.size());
  // 0 + g, as the hash merge starts every sum (-0 becomes +0).
  for (size_t v = 0; v < sums->size(); ++v) (*sums)[v] = 0.0f + first.gradients[v];
  std::vector<ps::Key> next_keys;
  std::vector<float> next_sums;
  for (size_t s = 1; s < pushes_.size(); ++s) {
    const Push& p = pushes_[s];
    next_keys.resize(keys->size() + p.keys.size());
    next_sums.resize(next_keys.size() * length);
    const size_t held_keys = keys->size(), pushed_keys = p.keys.size();
    size_t a = 0, b = 0, out = 0;
    while (a < held_keys || b < pushed_keys) {
      // The smaller key next; an equal key from both.
      const bool take_a = a < held_keys && (b == pushed_keys || (*keys)[a] <= p.keys[b]);
      const bool take_b = b < pushed_keys && (a == held_keys || p.keys[b] <= (*keys)[a]);
      float* sum = next_sums.data() + out * length;
      // Value by value, not copy_n / fill_n: a value or a few per key, where
      // a library call per key cost more than the merge.
      if (take_a) {
        next_keys[out] = (*keys)[a];
        const float* held = sums->data() + a * length;
        for (size_t j = 0; j < length; ++j) sum[j] = held[j];
        ++a;
      } else {
        next_keys[out] = p.keys[b];
        for (size_t j = 0; j < length; ++j) sum[j] = 0.0f;
      }
      if (take_b) {
        const float* g = p.gradients.data() + b * length;
        for (size_t j = 0; j < length; ++j) sum[j] += g[j];
        ++b;
      }
      ++out;
    }
    next_keys.resize(out);
    next_sums.resize(out * length);
    keys->swap(next_keys);
    sums->swap(next_sums);
  }
}

void BspRound::MergeByHash(std::vector<ps::Key>* keys, std::vector<float>* sums) const {
  size_t total = 0;
  for (const Push& p : pushes_) total += p.keys.size();
  KeyIndex slot_of;  // key -> its place in `keys`: the order keys are first met
  slot_of.Reserve(total);
  for (const Push& p : pushes_) {
    for (size_t i = 0; i < p.keys.size(); ++i) {
      bool added = false;
      const size_t slot = slot_of.FindOrAdd(p.keys[i], &added);
      if (added) {
        keys->push_back(p.keys[i]);
        sums->resize(sums->size() + value_length_, 0.0f);
      }
      float* sum = sums->data() + slot * value_length_;
      const float* g = p.gradients.data() + i * value_length_;
      for (uint32_t j = 0; j < value_length_; ++j) sum[j] += g[j];
    }
  }
}

void BspRound::Clear() {
  pushes_.clear();
  contributions_ = 0;
}

}  // namespace libra::train
