// The keys a WRITTEN_KEYS report (control_messages.h) speaks of, and how the
// set is written: the one definition both sides use. A worker tells each
// server which of that server's hot keys its hot push of an epoch carried;
// once every worker has told, the server reads only the cells of the keys
// some worker wrote, packed as tightly as DATA packets are, instead of every
// cell (or every row) it owns.
//
// A key is named by its position among the server's owned keys in ascending
// key order (OwnedKeyPositions); a report is a set of positions in
// [0, universe), universe = the number of keys the server owns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "hot/hot_set.h"

namespace libra::hotpath {

// For every key of the hot set (by its index there), its position among the
// keys its owner server owns, ascending by key: `owners[i]` is the server
// of hot key i. Returns positions[i]; `universe_of_server` gets, per
// server, how many keys it owns.
std::vector<std::uint32_t> OwnedKeyPositions(const hot::HotSet& hot_set,
                                             std::span<const std::uint32_t> owners,
                                             std::vector<std::uint32_t>* universe_of_server);

// A set of positions in [0, universe), written as whichever form is shorter
// (a sparse epoch touches few keys, a dense one most of them):
//   byte 0 = kKeySetBitmap, then ceil(universe / 8) bytes: position k is bit
//            k % 8 (least significant first) of byte k / 8;
//   byte 0 = kKeySetGaps, then one LEB128 varint per position, ascending:
//            the first position, then each one's distance from the previous
//            minus 1.
inline constexpr std::uint8_t kKeySetBitmap = 0;
inline constexpr std::uint8_t kKeySetGaps = 1;

// `positions` ascending, without repeats, each below `universe` (throws
// std::invalid_argument otherwise).
std::vector<std::uint8_t> EncodeKeySet(std::span<const std::uint32_t> positions,
                                       std::uint32_t universe);

// Sets, in `bitmap` (ceil(universe / 8) bytes, the kKeySetBitmap layout), the
// bit of every position `set` names. Returns false, leaving `bitmap`
// unchanged, when `set` is not a set EncodeKeySet writes for `universe`
// (unknown form, wrong length, a position out of range or not ascending, a
// malformed varint).
bool MergeKeySet(std::span<const std::uint8_t> set, std::uint32_t universe,
                 std::span<std::uint8_t> bitmap);

inline std::size_t KeyBitmapBytes(std::uint32_t universe) { return (universe + 7u) / 8u; }
inline bool KeyBit(std::span<const std::uint8_t> bitmap, std::size_t k) {
  return ((bitmap[k / 8] >> (k % 8)) & 1) != 0;
}

}  // namespace libra::hotpath
