#include "train/bsp_round.h"

#include <algorithm>

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
