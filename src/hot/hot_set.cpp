#include "hot/hot_set.h"

#include <algorithm>
#include <string>

namespace libra::hot {
namespace {

constexpr HotSet::CellOwner kFreeCell{HotSet::kCold, 0};

}  // namespace

void SwitchLayout::Validate() const {
  if (num_arrays == 0) throw std::invalid_argument("switch layout: num_arrays must be positive");
  if (cells_per_array == 0) {
    throw std::invalid_argument("switch layout: cells_per_array must be positive");
  }
  if (num_banks == 0) throw std::invalid_argument("switch layout: num_banks must be positive");
  if (capacity() >= HotSet::kCold) {
    throw std::invalid_argument("switch layout: more than 2^32-2 cells per bank");
  }
}

std::string_view PlacementName(PlacementKind kind) {
  switch (kind) {
    case PlacementKind::kHeat:
      return "heat";
    case PlacementKind::kHash:
      return "hash";
  }
  return "unknown";
}

PlacementKind ParsePlacementKind(std::string_view name) {
  if (name == "heat") return PlacementKind::kHeat;
  if (name == "hash") return PlacementKind::kHash;
  throw std::invalid_argument("unknown placement '" + std::string(name) +
                              "' (expected heat or hash)");
}

std::vector<HotKey> ChooseHotKeys(std::vector<HotKey> candidates, uint64_t capacity_cells,
                                  uint64_t min_frequency) {
  const auto heavier = [](const HotKey& a, const HotKey& b) {
    return a.frequency != b.frequency ? a.frequency > b.frequency : a.key < b.key;
  };
  // Every chosen key takes a cell, so the heaviest `capacity_cells` nearly
  // always decide: rank those first (a JOIN's ~100k candidates took ~12 ms
  // to sort whole) and the rest only if skipped keys left cells free. The
  // order is total, so the choice is the full sort's.
  const auto ranked_end = candidates.begin() + static_cast<std::ptrdiff_t>(std::min<uint64_t>(
                                                   capacity_cells, candidates.size()));
  std::nth_element(candidates.begin(), ranked_end, candidates.end(), heavier);
  std::sort(candidates.begin(), ranked_end, heavier);
  std::vector<HotKey> chosen = ChooseRankedHotKeys(
      std::span<const HotKey>(candidates.data(),
                              static_cast<size_t>(ranked_end - candidates.begin())),
      capacity_cells, min_frequency);
  uint64_t used = 0;
  for (const HotKey& key : chosen) used += key.value_len;
  if (used < capacity_cells && ranked_end != candidates.end()) {
    std::sort(ranked_end, candidates.end(), heavier);
    // Resume the greedy fill where it stopped, with the cells left.
    std::vector<HotKey> more = ChooseRankedHotKeys(
        std::span<const HotKey>(&*ranked_end, static_cast<size_t>(candidates.end() - ranked_end)),
        capacity_cells - used, min_frequency);
    chosen.insert(chosen.end(), more.begin(), more.end());
  }
  return chosen;
}

std::vector<HotKey> ChooseRankedHotKeys(std::span<const HotKey> ranked, uint64_t capacity_cells,
                                        uint64_t min_frequency) {
  std::vector<HotKey> chosen;
  // Sized once: this is on the controller's path every worker waits for.
  chosen.reserve(static_cast<size_t>(std::min<uint64_t>(ranked.size(), capacity_cells)));
  uint64_t free_cells = capacity_cells;
  for (const HotKey& candidate : ranked) {
    if (candidate.frequency < min_frequency || candidate.frequency == 0 || free_cells == 0) break;
    if (candidate.value_len == 0 || candidate.value_len > free_cells) continue;
    chosen.push_back(candidate);
    free_cells -= candidate.value_len;
  }
  return chosen;
}

HotSet::HotSet(SwitchLayout layout, PlacementKind placement, std::vector<HotKey> keys,
               std::vector<CellAddress> cells)
    : layout_(layout),
      placement_(placement),
      keys_(std::move(keys)),
      cells_(std::move(cells)),
      index_(keys_.size()) {
  layout_.Validate();
  if (keys_.size() >= kCold) throw std::invalid_argument("hot set: too many keys");
  value_begin_.reserve(keys_.size() + 1);
  value_begin_.push_back(0);
  for (const HotKey& key : keys_) {
    if (key.value_len == 0) {
      throw std::invalid_argument("hot set: key " + std::to_string(key.key) + " has no values");
    }
    value_begin_.push_back(value_begin_.back() + key.value_len);
  }
  if (value_begin_.back() != cells_.size()) {
    throw std::invalid_argument("hot set: keys have " + std::to_string(value_begin_.back()) +
                                " values but " + std::to_string(cells_.size()) +
                                " cells are given");
  }
  owners_.assign(layout_.capacity(), kFreeCell);
  size_t filter_bits = 64;
  while (filter_bits < kFilterBitsPerKey * keys_.size()) filter_bits *= 2;
  maybe_hot_.assign(filter_bits / 64, 0);
  filter_shift_ = 64 - static_cast<unsigned>(__builtin_ctzll(filter_bits));
  for (const HotKey& key : keys_) {
    const size_t bit = FilterBit(key.key);
    maybe_hot_[bit / 64] |= uint64_t{1} << (bit % 64);
  }
  for (uint32_t k = 0; k < keys_.size(); ++k) {
    Entry& slot = index_.FindOrInsert(keys_[k].key, Entry{});
    if (slot.index != kCold) {
      throw std::invalid_argument("hot set: key " + std::to_string(keys_[k].key) +
                                  " is listed twice");
    }
    slot = Entry{k, keys_[k].value_len};
    for (uint32_t offset = 0; offset < keys_[k].value_len; ++offset) {
      const CellAddress cell = cells_[value_begin_[k] + offset];
      if (cell.array >= layout_.num_arrays || cell.index >= layout_.cells_per_array) {
        throw std::invalid_argument("hot set: cell (" + std::to_string(cell.array) + ", " +
                                    std::to_string(cell.index) + ") is outside the switch");
      }
      CellOwner& owner = owners_[uint64_t{cell.array} * layout_.cells_per_array + cell.index];
      if (owner.key_index != kCold) {
        throw std::invalid_argument("hot set: cell (" + std::to_string(cell.array) + ", " +
                                    std::to_string(cell.index) + ") is used twice");
      }
      owner = CellOwner{k, offset};
    }
  }
}

std::optional<HotSet::CellOwner> HotSet::OwnerOf(CellAddress cell) const {
  if (cell.array >= layout_.num_arrays || cell.index >= layout_.cells_per_array) {
    return std::nullopt;
  }
  const CellOwner owner = owners_[uint64_t{cell.array} * layout_.cells_per_array + cell.index];
  if (owner.key_index == kCold) return std::nullopt;
  return owner;
}

}  // namespace libra::hot
