// Where hot values live in the switch: one small interface, two strategies.
//
// A packet carries one value per register array, so the number of packets a
// worker needs in an epoch is the length of its longest per-array queue.
// Heat-based placement spreads the expected per-epoch load (update frequency)
// evenly over the arrays and puts the values of one key in different arrays;
// hash placement is the baseline it is measured against.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "hot/hot_set.h"

namespace libra::hot {

class Placement {
 public:
  virtual ~Placement() = default;
  virtual PlacementKind kind() const = 0;
  // Cells for the values of `keys`, key after key in the order given. Throws
  // std::invalid_argument if they do not fit in `layout`.
  virtual std::vector<CellAddress> Place(std::span<const HotKey> keys,
                                         const SwitchLayout& layout) const = 0;
};

// Greedy balancing in order of heat: each key's values go to the arrays with
// the least expected load so far that still have free cells, all different
// while the key has no more values than there are arrays.
class HeatPlacement final : public Placement {
 public:
  PlacementKind kind() const override { return PlacementKind::kHeat; }
  std::vector<CellAddress> Place(std::span<const HotKey> keys,
                                 const SwitchLayout& layout) const override;
};

// Each value goes to the array its (key, offset) hashes to, or the next one
// with a free cell; what a placement that ignores heat and layout does.
class HashPlacement final : public Placement {
 public:
  PlacementKind kind() const override { return PlacementKind::kHash; }
  std::vector<CellAddress> Place(std::span<const HotKey> keys,
                                 const SwitchLayout& layout) const override;
};

// Each owner (a server) gets a band of rows (cell index i across every
// array), as many as its values fill, and `inner` places its keys inside
// the band. A server then owns whole rows and reads its sums with one
// COLLECT per row (docs/protocol.md) instead of one slot per cell. Throws
// std::invalid_argument when the bands do not fit the layout.
class BandedPlacement final : public Placement {
 public:
  // `owner_of_key`: the owner of each key, in the order Place receives them.
  BandedPlacement(std::vector<uint32_t> owner_of_key, std::unique_ptr<Placement> inner);
  PlacementKind kind() const override { return inner_->kind(); }
  std::vector<CellAddress> Place(std::span<const HotKey> keys,
                                 const SwitchLayout& layout) const override;

 private:
  std::vector<uint32_t> owner_of_key_;
  std::unique_ptr<Placement> inner_;
};

std::unique_ptr<Placement> MakePlacement(PlacementKind kind);

// Throws std::invalid_argument if the values of `keys` exceed the layout's cells.
void CheckFits(std::span<const HotKey> keys, const SwitchLayout& layout);

// Places `keys` with `placement` and builds the installable hot set.
HotSet PlaceHotSet(std::vector<HotKey> keys, const SwitchLayout& layout,
                   const Placement& placement);

}  // namespace libra::hot
