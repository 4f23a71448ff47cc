// An open-addressing hash table from 64-bit parameter keys to a small value.
//
// The hot-parameter code looks keys up on every feature occurrence it reads
// and on every value a worker pushes, so it needs a map that is one cache line
// per lookup in the common case: linear probing over a flat array of
// (key, value) pairs, power-of-two size, load factor at most 1/2. Every 64-bit
// key is allowed; the one key equal to the empty marker lives beside the array.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "hot/prefetch.h"

namespace libra::hot {

using Key = uint64_t;

template <typename Value>
class HotKeyTable {
 public:
  struct Slot {
    Key key;
    Value value;
  };

  explicit HotKeyTable(size_t expected_keys = 0) { Rehash(CapacityFor(expected_keys)); }

  size_t size() const { return size_ + (has_marker_key_ ? 1 : 0); }
  bool empty() const { return size() == 0; }

  // Bytes held by the table itself (what a memory budget must account for).
  size_t memory_bytes() const { return slots_.capacity() * sizeof(Slot); }

  // Bytes per key the table needs at its worst load factor, for budgeting.
  static constexpr size_t kWorstBytesPerKey = 2 * sizeof(Slot);

  Value* Find(Key key) {
    if (key == kEmpty) return has_marker_key_ ? &marker_value_ : nullptr;
    for (size_t i = Home(key);; i = (i + 1) & mask_) {
      Slot& slot = slots_[i];
      if (slot.key == key) return &slot.value;
      if (slot.key == kEmpty) return nullptr;
    }
  }
  const Value* Find(Key key) const { return const_cast<HotKeyTable*>(this)->Find(key); }

  // Starts loading the cache line `key` probes first. Counting loops issue it
  // a few keys ahead so that lookups of cold keys overlap their memory misses.
  void Prefetch(Key key) const { PrefetchForRead(&slots_[Home(key)]); }

  // Returns the value of `key`, inserting `initial` first if it is absent.
  Value& FindOrInsert(Key key, Value initial = Value{}) {
    if (key == kEmpty) {
      if (!has_marker_key_) {
        has_marker_key_ = true;
        marker_value_ = initial;
      }
      return marker_value_;
    }
    for (size_t i = Home(key);; i = (i + 1) & mask_) {
      Slot& slot = slots_[i];
      if (slot.key == key) return slot.value;
      if (slot.key == kEmpty) {
        if (2 * (size_ + 1) > slots_.size()) {
          Rehash(slots_.size() * 2);
          return FindOrInsert(key, initial);
        }
        slot.key = key;
        slot.value = initial;
        ++size_;
        return slot.value;
      }
    }
  }

  // Removes `key` if present (backward-shift deletion keeps probe chains intact).
  void Erase(Key key) {
    if (key == kEmpty) {
      has_marker_key_ = false;
      return;
    }
    size_t hole = Home(key);
    while (slots_[hole].key != key) {
      if (slots_[hole].key == kEmpty) return;
      hole = (hole + 1) & mask_;
    }
    for (size_t next = (hole + 1) & mask_; slots_[next].key != kEmpty; next = (next + 1) & mask_) {
      const size_t home = Home(slots_[next].key);
      // The entry at `next` may move into the hole unless its home lies
      // cyclically in (hole, next].
      const bool home_after_hole = ((next - home) & mask_) < ((next - hole) & mask_);
      if (!home_after_hole) {
        slots_[hole] = slots_[next];
        hole = next;
      }
    }
    slots_[hole].key = kEmpty;
    --size_;
  }

  void Clear() {
    for (Slot& slot : slots_) slot.key = kEmpty;
    size_ = 0;
    has_marker_key_ = false;
  }

  // Calls fn(key, value) for every entry, in no particular order.
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    if (has_marker_key_) fn(kEmpty, marker_value_);
    for (const Slot& slot : slots_) {
      if (slot.key != kEmpty) fn(slot.key, slot.value);
    }
  }

 private:
  static constexpr Key kEmpty = ~Key{0};

  static size_t CapacityFor(size_t keys) {
    size_t capacity = 16;
    while (capacity < 2 * keys) capacity *= 2;
    return capacity;
  }

  // Fibonacci hashing after folding the high half in: parameter keys are often
  // hashed already, but synthetic ones are small consecutive integers.
  size_t Home(Key key) const {
    const uint64_t folded = key ^ (key >> 29);
    return static_cast<size_t>((folded * 0x9E3779B97F4A7C15ull) >> shift_);
  }

  void Rehash(size_t capacity) {
    std::vector<Slot> old =
        std::exchange(slots_, std::vector<Slot>(capacity, Slot{kEmpty, Value{}}));
    mask_ = capacity - 1;
    shift_ = 64 - static_cast<unsigned>(__builtin_ctzll(capacity));
    size_ = 0;
    for (const Slot& slot : old) {
      if (slot.key == kEmpty) continue;
      size_t i = Home(slot.key);
      while (slots_[i].key != kEmpty) i = (i + 1) & mask_;
      slots_[i] = slot;
      ++size_;
    }
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  unsigned shift_ = 64;
  size_t size_ = 0;
  bool has_marker_key_ = false;
  Value marker_value_{};
};

}  // namespace libra::hot
