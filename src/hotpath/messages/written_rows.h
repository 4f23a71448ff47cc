// The rows a WRITTEN_ROWS report (control_messages.h) speaks of, and its
// bitmap: the one definition both sides use. A server that reads by row
// (COLLECT flagged ROW) reads CollectRows of its keys, in that order; a
// worker reports which of them its hot push wrote, as bit k for the k-th
// row; the server then reads only the rows some worker's bit names.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "hot/hot_set.h"

namespace libra::hotpath {

// The rows (cell index, the same in every register array) that hold the
// values of `keys`, ascending and without repeats (a key not in the hot set
// holds none): the rows a collector that owns `keys` reads by row, in the
// order of its COLLECTs.
std::vector<std::uint32_t> CollectRows(const hot::HotSet& hot_set, std::span<const hot::Key> keys);

// A bitmap over `rows` rows: bit k, for the k-th of CollectRows, is bit k % 8
// (least significant first) of byte k / 8.
inline std::size_t RowBitmapBytes(std::size_t rows) { return (rows + 7) / 8; }
inline void SetRowBit(std::span<std::uint8_t> bitmap, std::size_t k) {
  bitmap[k / 8] |= static_cast<std::uint8_t>(1u << (k % 8));
}
inline bool RowBit(std::span<const std::uint8_t> bitmap, std::size_t k) {
  return ((bitmap[k / 8] >> (k % 8)) & 1) != 0;
}

}  // namespace libra::hotpath
