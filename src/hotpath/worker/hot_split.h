// How a worker's push divides between the hot path and the servers: a key
// goes hot when it is in the hot set with the same number of values as the
// hot set gave it (a key pushed with another length than it was sampled
// with has no cells that fit it, and goes to its server as before).
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "hot/hot_set.h"
#include "ps/internal/hot_path_hooks.h"

namespace libra::hotpath {

// The number of values key `i` of `push` has: its lens entry, or an even
// share of the values when the push has no lens.
int ValuesOfKey(const ps::WorkerHotPath::Parts& push, std::size_t i);

// Appends each key of `push`, with its values, to `hot` or `cold`, in the
// push's order. `hot` always gets lens; `cold` gets them when `push` had
// them. `hot_entries`, if given, gets the hot set's entry of each hot key
// (so that the sender and the WRITTEN_KEYS look no key up again).
void SplitHotAndCold(const hot::HotSet& hot_set, const ps::WorkerHotPath::Parts& push,
                     ps::WorkerHotPath::Parts* hot, ps::WorkerHotPath::Parts* cold,
                     std::vector<hot::HotSet::Entry>* hot_entries = nullptr);

// The same with each key's hot-set entry given (entries[i] for push.keys[i],
// as PulledKeys keeps them): no key is looked up. Throws
// std::invalid_argument unless there is one entry per key.
void SplitHotAndCold(std::span<const hot::HotSet::Entry> entries,
                     const ps::WorkerHotPath::Parts& push, ps::WorkerHotPath::Parts* hot,
                     ps::WorkerHotPath::Parts* cold,
                     std::vector<hot::HotSet::Entry>* hot_entries = nullptr);

// What the hot set says of each key of a worker's last pull. A training
// loop pushes the gradients of the keys it has just pulled (PS-lite's
// pull, compute, push), so the push can split by these entries after one
// comparison of the two key lists instead of a hash lookup per key, each a
// likely cache miss in a table of tens of thousands of keys.
class PulledKeys {
 public:
  // A pull of more keys than this is classified but not kept for a push (a
  // 10M-key pull, as `libra bench kv` makes, would keep 80 MB of keys).
  static constexpr std::size_t kMostKeysKept = std::size_t{1} << 20;

  // Looks up every key of `keys` in `hot_set` and keeps the keys (up to
  // kMostKeysKept of them) and their entries (index kCold for a cold key)
  // until the next call. The entries are valid until then.
  std::span<const hot::HotSet::Entry> Classify(const hot::HotSet& hot_set,
                                               std::span<const hot::Key> keys);

  // The entries of `keys` if they are exactly the last classified keys,
  // looked up in `hot_set`; nothing otherwise.
  std::optional<std::span<const hot::HotSet::Entry>> EntriesOf(
      const hot::HotSet& hot_set, std::span<const hot::Key> keys) const;

 private:
  const hot::HotSet* hot_set_ = nullptr;
  std::vector<hot::Key> keys_;
  std::vector<hot::HotSet::Entry> entries_;
};

}  // namespace libra::hotpath
