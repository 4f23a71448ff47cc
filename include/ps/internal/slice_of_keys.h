// Which slice a slicer put each of a list of keys in: the server rank each
// key of a JOIN goes to (KVWorker::ServerOf).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "ps/base.h"
#include "ps/sarray.h"

namespace ps {

namespace internal {

// `keys` is sorted and distinct; `sliced[i].second.keys` lists the keys
// slice i holds (a KVWorker's SlicedKVs). Returns, for each of `keys`, the
// first slice that holds it, or 0 for one that none does.
//
// A slice of the default slicer is a run of `keys`, so a sliced key is most
// often the one after the last found; otherwise a binary search finds it. A
// JOIN asks this of ~100k keys: a hash map of them took ~20 ms, a search
// per key ~18 ms, the walk about 1 ms.
template <typename Sliced>
std::vector<uint32_t> SliceOfEachKey(const SArray<Key>& keys, const Sliced& sliced) {
  std::vector<uint32_t> out(keys.size(), 0);
  std::vector<bool> placed(keys.size(), false);
  for (size_t i = 0; i < sliced.size(); ++i) {
    const Key* next = keys.end();  // after the last key found
    for (Key key : sliced[i].second.keys) {
      const Key* at = next != keys.end() && *next == key
                          ? next
                          : std::lower_bound(keys.begin(), keys.end(), key);
      if (at == keys.end() || *at != key) continue;
      next = at + 1;
      const size_t place = static_cast<size_t>(at - keys.begin());
      if (placed[place]) continue;
      placed[place] = true;
      out[place] = static_cast<uint32_t>(i);
    }
  }
  return out;
}

}  // namespace internal

}  // namespace ps
