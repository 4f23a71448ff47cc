// The hot set: the parameter keys aggregated in the switch, and where each of
// their values lives in the switch's register arrays.
//
// It is computed once (by the profiler or the controller), written to a
// hot-set file, and installed on every node: workers use it to pack DATA
// packets, servers to COLLECT the cells of their keys. Both directions are
// O(1): key -> its cells, and cell -> (key, value offset).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "hot/hot_key_table.h"

namespace libra::hot {

// The part of the switch that holds hot values. Each register array has
// `cells_per_array` cells in each of `num_banks` banks (banks alternate by
// epoch parity, so a value owns the same index in every bank). A packet has
// one value slot per register array. The defaults are the largest layout the
// default pipeline (Tofino-1, 32 slots per packet) holds: SwitchLayoutFor in
// hot_switch_layout.h derives it and a test keeps the two equal.
struct SwitchLayout {
  uint32_t num_arrays = 32;
  uint32_t cells_per_array = 12288;
  uint32_t num_banks = 2;

  uint64_t capacity() const { return uint64_t{num_arrays} * cells_per_array; }
  // Throws std::invalid_argument naming the bad field.
  void Validate() const;
};

// A value's home: register array and index inside one bank.
struct CellAddress {
  uint32_t array = 0;
  uint32_t index = 0;
  friend bool operator==(const CellAddress&, const CellAddress&) = default;
};

// The cell's index in the array's whole register (banks laid end to end).
inline uint64_t PhysicalIndex(const SwitchLayout& layout, CellAddress cell, uint32_t bank) {
  return uint64_t{bank} * layout.cells_per_array + cell.index;
}

struct HotKey {
  Key key = 0;
  uint32_t value_len = 1;  // values (cells) the key takes
  uint64_t frequency = 0;  // updates counted for it (pushes that carried it)
};

enum class PlacementKind : uint32_t { kHeat = 1, kHash = 2 };
std::string_view PlacementName(PlacementKind kind);
// "heat" or "hash"; throws std::invalid_argument otherwise.
PlacementKind ParsePlacementKind(std::string_view name);

// The keys with most updates whose values fit in `capacity_cells`, heaviest
// first. A key that does not fit is skipped and lighter, shorter ones may
// still fill the space. Keys with frequency below `min_frequency` are left out.
std::vector<HotKey> ChooseHotKeys(std::vector<HotKey> candidates, uint64_t capacity_cells,
                                  uint64_t min_frequency = 0);

// The same greedy fill over candidates already ranked best first, for callers
// that rank by more than the frequency (the profiler breaks ties between
// equal update counts by how often the key occurs). Stops at the first
// candidate below `min_frequency`, so the ranking must put those last.
std::vector<HotKey> ChooseRankedHotKeys(std::span<const HotKey> ranked, uint64_t capacity_cells,
                                        uint64_t min_frequency = 0);

class HotSet {
 public:
  static constexpr uint32_t kCold = ~uint32_t{0};

  struct CellOwner {
    uint32_t key_index;
    uint32_t offset;  // which of the key's values
  };

  HotSet() = default;
  // `cells` holds the cells of every key's values, key after key in the order
  // of `keys`. Throws std::invalid_argument if a cell is out of range or used
  // twice, or the counts do not match.
  HotSet(SwitchLayout layout, PlacementKind placement, std::vector<HotKey> keys,
         std::vector<CellAddress> cells);

  const SwitchLayout& layout() const { return layout_; }
  PlacementKind placement() const { return placement_; }
  size_t size() const { return keys_.size(); }
  size_t num_values() const { return cells_.size(); }
  std::span<const HotKey> keys() const { return keys_; }
  std::span<const CellAddress> cells() const { return cells_; }

  // What one lookup tells of a key: its index in keys() (kCold when it is
  // not hot) and its number of values. The length is kept beside the index
  // in the lookup table's slot, which has room for it, so that a caller
  // that needs both (splitting a push, sizing a key's cells) reads one
  // cache line rather than a second one in keys().
  struct Entry {
    uint32_t index = kCold;
    uint32_t value_len = 0;
  };
  Entry Lookup(Key key) const {
    if (!MaybeHot(key)) return Entry{};
    const Entry* entry = index_.Find(key);
    return entry != nullptr ? *entry : Entry{};
  }
  // The Lookup of every key of `keys`, in order, each slot fetched a few
  // keys ahead (PrefetchAhead).
  std::vector<Entry> LookupAll(std::span<const Key> keys) const {
    std::vector<Entry> entries(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
      PrefetchAhead(keys.data(), keys.size(), i);
      entries[i] = Lookup(keys[i]);
    }
    return entries;
  }
  // `given` (a caller's lookups of `keys`, one entry per key) when there
  // are any, else LookupAll(keys), kept in `*storage`: for functions that
  // take entries a caller may already have.
  std::span<const Entry> EntriesOf(std::span<const Key> keys, std::span<const Entry> given,
                                   std::vector<Entry>* storage) const {
    if (!given.empty()) return given;
    *storage = LookupAll(keys);
    return *storage;
  }
  // The key's index in keys(), or kCold.
  uint32_t Find(Key key) const { return Lookup(key).index; }
  bool IsHot(Key key) const { return Find(key) != kCold; }
  // For a caller that looks up `keys[0..count)` in a row, before it looks
  // up keys[i]: fetches the slot Find reads for the key kLookAhead places
  // on into the cache (a push's keys scatter over the table, and each
  // lookup would otherwise wait on memory).
  void PrefetchAhead(const Key* keys, size_t count, size_t i) const {
    if (i + kLookAhead < count && MaybeHot(keys[i + kLookAhead])) {
      index_.Prefetch(keys[i + kLookAhead]);
    }
  }
  static constexpr size_t kLookAhead = 8;
  std::span<const CellAddress> CellsOf(uint32_t key_index) const {
    return std::span<const CellAddress>(cells_).subspan(value_begin_[key_index],
                                                        keys_[key_index].value_len);
  }
  // The same for a hot key's Lookup (no read of keys()).
  std::span<const CellAddress> CellsOf(Entry entry) const {
    return std::span<const CellAddress>(cells_).subspan(value_begin_[entry.index], entry.value_len);
  }
  // For a caller that reads CellsOf(entries[i]) for i = 0, 1, ... in a row,
  // before it reads entry i: fetches into the cache what CellsOf reads a
  // few entries on, in two steps since the second read depends on the
  // first (the key's first value, kLookAhead entries on; its cells, half as
  // far, whose first value came in kLookAhead / 2 calls ago). A push's hot
  // keys scatter over both arrays, and each read would otherwise wait on
  // memory that the other processes on these cores have evicted.
  void PrefetchCellsAhead(std::span<const Entry> entries, size_t i) const {
    // value_begin_ has a last entry past the keys', which no hot entry names.
    PrefetchIndirectAhead(entries, i, std::span<const uint64_t>(value_begin_),
                          std::span<const CellAddress>(cells_), kLookAhead);
  }
  // Who owns a cell, or nothing for a free or out-of-range cell.
  std::optional<CellOwner> OwnerOf(CellAddress cell) const;

 private:
  SwitchLayout layout_;
  PlacementKind placement_ = PlacementKind::kHeat;
  std::vector<HotKey> keys_;
  std::vector<CellAddress> cells_;
  std::vector<uint64_t> value_begin_;  // keys_.size() + 1 prefix sums of value_len
  std::vector<CellOwner> owners_;      // by array * cells_per_array + index
  HotKeyTable<Entry> index_;
  // A filter in front of index_: one bit per hash of a key, set for the hot
  // keys, at least kFilterBitsPerKey bits per hot key. Most keys a worker
  // looks up are cold, and a clear bit answers them from this array (64 KiB
  // for 30,000 keys, cache-resident) instead of a miss in index_'s (1 MiB);
  // about 1 in kFilterBitsPerKey cold keys pass it and are looked up.
  static constexpr size_t kFilterBitsPerKey = 16;
  std::vector<uint64_t> maybe_hot_ = std::vector<uint64_t>(1, 0);  // empty set: all clear
  unsigned filter_shift_ = 58;                                     // 64 - log2(bits)
  size_t FilterBit(Key key) const {
    // Another multiplier than index_'s hash, so that the keys of one table
    // slot spread over the filter.
    return static_cast<size_t>(((key ^ (key >> 31)) * 0xD6E8FEB86659FD93ull) >> filter_shift_);
  }
  bool MaybeHot(Key key) const {
    const size_t bit = FilterBit(key);
    return ((maybe_hot_[bit / 64] >> (bit % 64)) & 1) != 0;
  }
};

// A hot-set file that cannot be read; the message names the file and the fault.
class HotSetFileError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline constexpr uint32_t kHotSetFileVersion = 1;

// The largest layout (cells per bank) a hot-set file or an INSTALL message
// may describe. HotSet keeps an 8-byte owner entry per cell of its layout, so
// a corrupt header could otherwise demand up to 32 GiB; this is 5.3 times
// what the Tofino-1 profile holds (32 x 12,288 cells, SwitchLayoutFor). (It
// was 2^24: a 49-byte input naming a layout just under that made the reader
// build a 134 MB table, 17-24 s under the fuzzers' sanitizers.)
inline constexpr uint64_t kMaxReadLayoutCells = uint64_t{1} << 21;

// Format: docs/hot-parameters.md. Throws HotSetFileError on I/O failure.
void WriteHotSetFile(const HotSet& hot_set, const std::string& path);
HotSet ReadHotSetFile(const std::string& path);

}  // namespace libra::hot
