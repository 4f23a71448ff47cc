#include "hot/placement.h"

namespace libra::hot {

namespace {

// SplitMix64's finaliser: a well-mixed hash of (key, offset).
uint64_t Mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

std::vector<CellAddress> HashPlacement::Place(std::span<const HotKey> keys,
                                              const SwitchLayout& layout) const {
  CheckFits(keys, layout);
  std::vector<CellAddress> cells;
  std::vector<uint32_t> next_free(layout.num_arrays, 0);
  for (const HotKey& key : keys) {
    for (uint32_t offset = 0; offset < key.value_len; ++offset) {
      uint32_t array =
          static_cast<uint32_t>(Mix(key.key * 0x9E3779B97F4A7C15ull + offset) % layout.num_arrays);
      // CheckFits guarantees some array has room.
      while (next_free[array] == layout.cells_per_array) array = (array + 1) % layout.num_arrays;
      cells.push_back(CellAddress{array, next_free[array]++});
    }
  }
  return cells;
}

}  // namespace libra::hot
