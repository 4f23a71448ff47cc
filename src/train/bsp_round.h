// One synchronous (BSP) iteration as a server sees it: the pushes of the
// iteration's gradients, collected until every worker's contribution is in,
// then merged in a fixed order so that the sum does not depend on which push
// arrived first.
//
// This is the one place that counts contributions. A push says how many
// workers' gradients it sums (KVMeta::num_merged): 1 for an ordinary worker
// push, N for hot keys the switch aggregated. The round is complete when the
// contributions add up to the expected count. With the switch path a server
// keeps one round per path (SyncOptimizerServer): the switch's push of N
// completes its round alone, the workers' cold pushes fill theirs.
#pragma once

#include <cstdint>
#include <vector>

#include "ps/base.h"
#include "ps/sarray.h"

namespace libra::train {

class BspRound {
 public:
  BspRound(uint32_t expected_contributions, uint32_t value_length);

  // Takes one push: `keys` sorted and unique, `gradients` value_length()
  // floats per key (already validated by the caller). Returns false, taking
  // nothing, if the push belongs to the next round: its sender already
  // contributed to this one, or it would overshoot the expected count.
  bool Add(int sender, uint32_t num_merged, const ps::SArray<ps::Key>& keys,
           const ps::SArray<float>& gradients);

  uint32_t contributions() const { return contributions_; }
  uint32_t expected_contributions() const { return expected_; }
  bool complete() const { return contributions_ == expected_; }

  // The per-key sum of all pushes, added up in ascending sender order (the
  // worker rank order, as node ids are assigned by rank). `keys` lists each
  // key once: ascending when the round has one or two pushes and their keys
  // ascend (merged by cursors), else in the order it was first met in that
  // sequence (merged by a hash table; PS-lite asks for sorted keys but does
  // not check).
  void Merge(std::vector<ps::Key>* keys, std::vector<float>* sums) const;

  // Starts the next round.
  void Clear();

 private:
  struct Push {
    int sender;
    ps::SArray<ps::Key> keys;
    ps::SArray<float> gradients;
  };

  void MergeAscending(std::vector<ps::Key>* keys, std::vector<float>* sums) const;
  void MergeByHash(std::vector<ps::Key>* keys, std::vector<float>* sums) const;

  uint32_t expected_;
  uint32_t value_length_;
  uint32_t contributions_ = 0;
  std::vector<Push> pushes_;  // kept sorted by sender
};

}  // namespace libra::train
