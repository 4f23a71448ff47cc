#include "hotpath/messages/written_rows.h"

#include <algorithm>

namespace libra::hotpath {

std::vector<std::uint32_t> CollectRows(const hot::HotSet& hot_set, std::span<const hot::Key> keys) {
  std::vector<std::uint32_t> rows;
  for (const hot::Key key : keys) {
    const std::uint32_t index = hot_set.Find(key);
    if (index == hot::HotSet::kCold) continue;
    for (const hot::CellAddress& cell : hot_set.CellsOf(index)) rows.push_back(cell.index);
  }
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

}  // namespace libra::hotpath
