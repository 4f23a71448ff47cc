#include "hot/placement.h"

#include <string>

namespace libra::hot {

void CheckFits(std::span<const HotKey> keys, const SwitchLayout& layout) {
  layout.Validate();
  uint64_t values = 0;
  for (const HotKey& key : keys) values += key.value_len;
  if (values > layout.capacity()) {
    throw std::invalid_argument("placement: " + std::to_string(values) +
                                " hot values do not fit in " + std::to_string(layout.capacity()) +
                                " cells");
  }
}

std::unique_ptr<Placement> MakePlacement(PlacementKind kind) {
  switch (kind) {
    case PlacementKind::kHeat:
      return std::make_unique<HeatPlacement>();
    case PlacementKind::kHash:
      return std::make_unique<HashPlacement>();
  }
  throw std::invalid_argument("unknown placement kind");
}

HotSet PlaceHotSet(std::vector<HotKey> keys, const SwitchLayout& layout,
                   const Placement& placement) {
  std::vector<CellAddress> cells = placement.Place(keys, layout);
  return HotSet(layout, placement.kind(), std::move(keys), std::move(cells));
}

}  // namespace libra::hot
