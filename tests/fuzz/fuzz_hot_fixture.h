// The small hot set that the hot-path fuzz targets and their seed generator
// share: 4 register arrays of 8 cells, 5 keys taking 8 values, so that a
// mutated slot index often lands on a cell that holds a value and often on
// one that does not.
#pragma once

#include <memory>
#include <vector>

#include "libra/hot_set.h"

namespace libra::fuzz {

inline constexpr std::uint32_t kFuzzJobId = 7;
inline constexpr std::uint16_t kFuzzWorkerId = 1;
inline constexpr std::uint16_t kFuzzServerId = 0;

inline std::shared_ptr<const hot::HotSet> FuzzHotSet() {
  static const std::shared_ptr<const hot::HotSet> hot_set = [] {
    hot::SwitchLayout layout;
    layout.num_arrays = 4;
    layout.cells_per_array = 8;
    layout.num_banks = 2;
    std::vector<hot::HotKey> keys = {
        {10, 1, 50}, {11, 2, 40}, {12, 1, 30}, {13, 3, 20}, {14, 1, 10}};
    std::vector<hot::CellAddress> cells = {{0, 0}, {1, 0}, {2, 0}, {3, 0},
                                           {0, 5}, {1, 5}, {2, 7}, {3, 7}};
    return std::make_shared<const hot::HotSet>(layout, hot::PlacementKind::kHeat, std::move(keys),
                                               std::move(cells));
  }();
  return hot_set;
}

// The keys of FuzzHotSet, in hot-set order, and one value per cell.
inline std::vector<hot::Key> FuzzHotKeys() { return {10, 11, 12, 13, 14}; }
inline std::vector<float> FuzzHotValues() { return {1, 2, 3, 4, 5, 6, 7, 8}; }

}  // namespace libra::fuzz
