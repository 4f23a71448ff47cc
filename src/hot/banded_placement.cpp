#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

#include "hot/placement.h"

namespace libra::hot {

BandedPlacement::BandedPlacement(std::vector<uint32_t> owner_of_key,
                                 std::unique_ptr<Placement> inner)
    : owner_of_key_(std::move(owner_of_key)), inner_(std::move(inner)) {
  if (inner_ == nullptr) throw std::invalid_argument("banded placement: no inner placement");
}

std::vector<CellAddress> BandedPlacement::Place(std::span<const HotKey> keys,
                                                const SwitchLayout& layout) const {
  CheckFits(keys, layout);
  if (owner_of_key_.size() != keys.size()) {
    throw std::invalid_argument("banded placement: " + std::to_string(owner_of_key_.size()) +
                                " owners for " + std::to_string(keys.size()) + " keys");
  }
  const uint32_t owners =
      keys.empty() ? 0 : *std::max_element(owner_of_key_.begin(), owner_of_key_.end()) + 1;
  std::vector<std::vector<uint32_t>> keys_of(owners);
  std::vector<uint64_t> values_of(owners, 0);
  for (uint32_t k = 0; k < keys.size(); ++k) {
    keys_of[owner_of_key_[k]].push_back(k);
    values_of[owner_of_key_[k]] += keys[k].value_len;
  }

  // Each owner's band: as many rows as its values fill across the arrays.
  std::vector<uint32_t> first_row(owners + 1, 0);
  for (uint32_t o = 0; o < owners; ++o) {
    const uint64_t rows = (values_of[o] + layout.num_arrays - 1) / layout.num_arrays;
    if (first_row[o] + rows > layout.cells_per_array) {
      throw std::invalid_argument("banded placement: the owners' rows exceed the " +
                                  std::to_string(layout.cells_per_array) + " cells per array");
    }
    first_row[o + 1] = first_row[o] + static_cast<uint32_t>(rows);
  }

  std::vector<uint64_t> first_value(keys.size() + 1, 0);
  for (size_t k = 0; k < keys.size(); ++k) first_value[k + 1] = first_value[k] + keys[k].value_len;
  std::vector<CellAddress> cells(first_value.back());
  for (uint32_t o = 0; o < owners; ++o) {
    if (keys_of[o].empty()) continue;
    std::vector<HotKey> band_keys;
    for (const uint32_t k : keys_of[o]) band_keys.push_back(keys[k]);
    const SwitchLayout band{layout.num_arrays, first_row[o + 1] - first_row[o], layout.num_banks};
    const std::vector<CellAddress> placed = inner_->Place(band_keys, band);
    size_t at = 0;
    for (const uint32_t k : keys_of[o]) {
      for (uint64_t v = first_value[k]; v < first_value[k + 1]; ++v, ++at) {
        cells[v] = CellAddress{placed[at].array, placed[at].index + first_row[o]};
      }
    }
  }
  return cells;
}

}  // namespace libra::hot
