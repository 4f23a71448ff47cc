#include "hotpath/messages/written_keys.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "wire/coding.h"

namespace libra::hotpath {

std::vector<std::uint32_t> OwnedKeyPositions(const hot::HotSet& hot_set,
                                             std::span<const std::uint32_t> owners,
                                             std::vector<std::uint32_t>* universe_of_server) {
  const auto keys = hot_set.keys();
  if (owners.size() != keys.size()) {
    throw std::invalid_argument("written keys: " + std::to_string(owners.size()) + " owners for " +
                                std::to_string(keys.size()) + " hot keys");
  }
  // Hot-set indices in ascending key order (the hot set keeps its keys in
  // placement order, not key order).
  std::vector<std::uint32_t> by_key(keys.size());
  std::iota(by_key.begin(), by_key.end(), 0u);
  std::sort(by_key.begin(), by_key.end(),
            [&](std::uint32_t a, std::uint32_t b) { return keys[a].key < keys[b].key; });
  const std::uint32_t num_servers =
      owners.empty() ? 0 : *std::max_element(owners.begin(), owners.end()) + 1;
  universe_of_server->assign(num_servers, 0);
  std::vector<std::uint32_t> positions(keys.size());
  for (const std::uint32_t index : by_key)
    positions[index] = (*universe_of_server)[owners[index]]++;
  return positions;
}

std::vector<std::uint8_t> EncodeKeySet(std::span<const std::uint32_t> positions,
                                       std::uint32_t universe) {
  wire::ByteWriter gaps;
  gaps.Put(kKeySetGaps);
  std::uint64_t next = 0;  // the lowest position the next one may take
  for (const std::uint32_t position : positions) {
    if (position < next || position >= universe) {
      throw std::invalid_argument("written keys: position " + std::to_string(position) +
                                  " out of order or not below " + std::to_string(universe));
    }
    gaps.PutVarint(position - next);
    next = std::uint64_t{position} + 1;
  }
  if (gaps.size() <= 1 + KeyBitmapBytes(universe)) {
    const std::string& bytes = gaps.bytes();
    return {bytes.begin(), bytes.end()};
  }
  std::vector<std::uint8_t> bitmap(1 + KeyBitmapBytes(universe), 0);
  bitmap[0] = kKeySetBitmap;
  for (const std::uint32_t k : positions) {
    bitmap[1 + k / 8] |= static_cast<std::uint8_t>(1u << (k % 8));
  }
  return bitmap;
}

bool MergeKeySet(std::span<const std::uint8_t> set, std::uint32_t universe,
                 std::span<std::uint8_t> bitmap) {
  if (set.empty() || bitmap.size() != KeyBitmapBytes(universe)) return false;
  const std::span<const std::uint8_t> body = set.subspan(1);
  if (set[0] == kKeySetBitmap) {
    if (body.size() != bitmap.size()) return false;
    // Bits past the universe in the last byte name no key.
    if (universe % 8 != 0 && (body.back() >> (universe % 8)) != 0) return false;
    for (std::size_t i = 0; i < body.size(); ++i) bitmap[i] |= body[i];
    return true;
  }
  if (set[0] != kKeySetGaps) return false;
  // Decoded whole before anything is merged: a malformed set changes nothing.
  std::vector<std::uint32_t> positions;
  wire::ByteReader reader(body);
  std::uint64_t next = 0;
  while (!reader.AtEnd()) {
    std::uint64_t gap = 0;
    if (!reader.GetVarint(&gap) || gap >= universe - next) return false;
    positions.push_back(static_cast<std::uint32_t>(next + gap));
    next = next + gap + 1;
  }
  for (const std::uint32_t k : positions) {
    bitmap[k / 8] |= static_cast<std::uint8_t>(1u << (k % 8));
  }
  return true;
}

}  // namespace libra::hotpath
