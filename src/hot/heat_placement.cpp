#include <algorithm>
#include <numeric>

#include "hot/placement.h"

namespace libra::hot {

std::vector<CellAddress> HeatPlacement::Place(std::span<const HotKey> keys,
                                              const SwitchLayout& layout) const {
  CheckFits(keys, layout);
  const uint32_t arrays = layout.num_arrays;

  // Heaviest keys first: the greedy rule balances best when the big weights
  // are placed while there is still room to even them out.
  std::vector<uint32_t> order(keys.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return keys[a].frequency > keys[b].frequency; });
  std::vector<uint64_t> first_value(keys.size() + 1, 0);
  for (size_t k = 0; k < keys.size(); ++k) first_value[k + 1] = first_value[k] + keys[k].value_len;

  std::vector<CellAddress> cells(first_value.back());
  std::vector<uint64_t> load(arrays, 0);       // expected values per epoch, in frequency units
  std::vector<uint32_t> next_free(arrays, 0);  // cells are handed out in index order
  std::vector<uint32_t> candidates;
  candidates.reserve(arrays);
  const auto lighter = [&](uint32_t a, uint32_t b) {
    return load[a] != load[b] ? load[a] < load[b] : a < b;
  };

  for (uint32_t k : order) {
    uint32_t placed = 0;
    // A key with more values than arrays takes several rounds, each round
    // in distinct arrays.
    while (placed < keys[k].value_len) {
      candidates.clear();
      for (uint32_t a = 0; a < arrays; ++a) {
        if (next_free[a] < layout.cells_per_array) candidates.push_back(a);
      }
      const size_t take = std::min<size_t>(candidates.size(), keys[k].value_len - placed);
      std::partial_sort(candidates.begin(), candidates.begin() + static_cast<ptrdiff_t>(take),
                        candidates.end(), lighter);
      for (size_t i = 0; i < take; ++i, ++placed) {
        const uint32_t array = candidates[i];
        cells[first_value[k] + placed] = CellAddress{array, next_free[array]++};
        load[array] += keys[k].frequency;
      }
    }
  }
  return cells;
}

}  // namespace libra::hot
