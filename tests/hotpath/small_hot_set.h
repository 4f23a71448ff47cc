// A small hot set for the hot path's unit tests: keys 10, 20, ... 100, every
// third with 2 values, the rest with 1, placed on a 4-array switch.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "hot/hot_set.h"
#include "hot/placement.h"

namespace libra::hotpath::testing {

inline std::shared_ptr<const hot::HotSet> SmallHotSet() {
  std::vector<hot::HotKey> keys;
  for (int k = 1; k <= 10; ++k) {
    keys.push_back(
        {static_cast<hot::Key>(10 * k), 1 + static_cast<std::uint32_t>(k % 3 == 0), 100});
  }
  return std::make_shared<const hot::HotSet>(
      hot::PlaceHotSet(keys, hot::SwitchLayout{4, 16, 2}, hot::HeatPlacement()));
}

// 200 one-value keys (0..199) on 8 arrays: 25 rows, so a push of all of
// them is 25 DATA packets and reading them 25 COLLECTs (the loss tests').
inline std::shared_ptr<const hot::HotSet> TwentyFiveRowHotSet() {
  std::vector<hot::HotKey> keys;
  for (int k = 0; k < 200; ++k) keys.push_back({static_cast<hot::Key>(k), 1, 1000u - k});
  return std::make_shared<const hot::HotSet>(
      hot::PlaceHotSet(keys, hot::SwitchLayout{8, 64, 2}, hot::HeatPlacement()));
}

// The number of values key `key` of SmallHotSet has.
inline int SmallHotSetLength(hot::Key key) { return (key / 10) % 3 == 0 ? 2 : 1; }

}  // namespace libra::hotpath::testing
