// The small hot set that the hot-path fuzz targets and their seed generator
// share: 4 register arrays of 8 cells, 5 keys taking 8 values, so that a
// mutated cell index (a slot's, or a row block's row or array mask) often
// lands on a cell that holds a value and often on one that does not. Two servers split the keys
// (FuzzKeyOwners), so that a replica follows two UPDATE streams at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "hot/hot_set.h"

namespace libra::fuzz {

inline constexpr std::uint32_t kFuzzJobId = 7;
inline constexpr std::uint16_t kFuzzWorkerId = 1;
inline constexpr std::uint16_t kFuzzServerId = 0;
inline constexpr std::uint16_t kFuzzOtherServerId = 1;

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

// The server that publishes each key of FuzzHotKeys: kFuzzServerId the keys
// 10, 12 and 14 (3 values), kFuzzOtherServerId 11 and 13 (5 values).
inline std::vector<std::uint16_t> FuzzKeyOwners() {
  return {kFuzzServerId, kFuzzOtherServerId, kFuzzServerId, kFuzzOtherServerId, kFuzzServerId};
}
// The keys (and their values, from FuzzHotValues) that `server` publishes.
inline std::vector<hot::Key> FuzzKeysOf(std::uint16_t server) {
  std::vector<hot::Key> keys;
  const std::vector<hot::Key> all = FuzzHotKeys();
  const std::vector<std::uint16_t> owners = FuzzKeyOwners();
  for (std::size_t k = 0; k < all.size(); ++k) {
    if (owners[k] == server) keys.push_back(all[k]);
  }
  return keys;
}
inline std::vector<float> FuzzValuesOf(std::uint16_t server) {
  std::vector<float> vals;
  const std::shared_ptr<const hot::HotSet> hot_set = FuzzHotSet();
  const std::vector<float> all = FuzzHotValues();
  const std::vector<std::uint16_t> owners = FuzzKeyOwners();
  std::size_t at = 0;
  for (std::size_t k = 0; k < owners.size(); ++k) {
    const std::uint32_t len = hot_set->keys()[k].value_len;
    if (owners[k] == server) vals.insert(vals.end(), all.begin() + at, all.begin() + at + len);
    at += len;
  }
  return vals;
}

}  // namespace libra::fuzz
