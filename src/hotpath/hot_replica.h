// A worker's copy of the hot parameters: one float per hot value, each with
// the epoch whose update it holds. REPLICA packets and repairs move cells
// forward, never back. The replica has reached epoch e when every cell holds
// e or later; the cells still below e are the gap to re-request.
//
// Not thread-safe; HotSender guards it with its lock.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "libra/hot_set.h"
#include "libra/wire.h"

namespace libra::hotpath {

class HotReplica {
 public:
  explicit HotReplica(const hot::HotSet& hot_set);

  struct ApplyResult {
    std::uint32_t advanced = 0;  // cells that took the value
    std::uint32_t stale = 0;     // cells that already held this epoch or a newer one
    std::uint32_t unknown = 0;   // slots naming a cell that holds no hot value
  };
  // The slots of one REPLICA packet of `epoch` (slot j: array j).
  ApplyResult Apply(std::uint32_t epoch, std::span<const wire::Slot> slots);
  // Values of hot `keys`, vals key after key, as of `epoch`.
  ApplyResult ApplyKeys(std::uint32_t epoch, std::span<const hot::Key> keys,
                        std::span<const float> vals);

  // The oldest epoch over all cells; nullopt while a cell has no value yet.
  std::optional<std::uint32_t> MinEpoch() const;
  // The newest epoch any cell holds; nullopt when none has a value.
  std::optional<std::uint32_t> MaxEpoch() const;
  // True when every cell of these keys holds `epoch` or later (any value
  // when `epoch` is nullopt). Keys must be hot.
  bool Reached(std::span<const hot::Key> keys, std::optional<std::uint32_t> epoch) const;
  // Appends the keys' values; lens gets each key's value count.
  void Read(std::span<const hot::Key> keys, std::vector<float>* vals, std::vector<int>* lens) const;
  // The keys with at least one cell below `epoch`, in hot-set order.
  std::vector<hot::Key> MissingKeys(std::uint32_t epoch) const;

 private:
  // Cell tags are epoch + 1, so that 0 means "no value yet".
  bool Store(std::uint64_t value_index, std::uint32_t tag, float value);

  const hot::HotSet& hot_set_;
  std::vector<std::uint64_t> first_value_;  // per hot key, prefix sums of value_len
  std::vector<float> values_;
  std::vector<std::uint32_t> tags_;
  // How many cells hold each tag: the oldest and newest are its ends.
  std::map<std::uint32_t, std::uint64_t> cells_per_tag_;
};

}  // namespace libra::hotpath
