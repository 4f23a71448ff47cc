#include "train/key_index.h"

#include <bit>
#include <stdexcept>

namespace libra::train {

uint32_t KeyIndex::FindOrAdd(uint64_t key, bool* added) {
  const size_t mask = slots_.size() - 1;
  for (size_t i = HomeOf(key);; i = (i + 1) & mask) {
    Slot& slot = slots_[i];
    if (slot.entry == kEmpty) {
      if (2 * (size_ + 1) > slots_.size()) {  // keep at most half full: short probes
        Rehash(2 * slots_.size());
        return FindOrAdd(key, added);
      }
      if (size_ >= kEmpty) throw std::length_error("key index: more than 2^32 - 1 keys");
      slot = {key, static_cast<uint32_t>(size_++)};
      *added = true;
      return slot.entry;
    }
    if (slot.key == key) {
      *added = false;
      return slot.entry;
    }
  }
}

uint32_t KeyIndex::Find(uint64_t key) const {
  const size_t mask = slots_.size() - 1;
  for (size_t i = HomeOf(key);; i = (i + 1) & mask) {
    const Slot& slot = slots_[i];
    if (slot.entry == kEmpty || slot.key == key) return slot.entry;
  }
}

void KeyIndex::Clear() {
  size_ = 0;
  slots_.assign(16, Slot{0, kEmpty});
  shift_ = 64 - 4;
}

void KeyIndex::Reserve(size_t keys) {
  const size_t capacity = std::bit_ceil(2 * keys);
  if (capacity > slots_.size()) Rehash(capacity);
}

void KeyIndex::Rehash(size_t capacity) {
  std::vector<Slot> old(capacity, Slot{0, kEmpty});
  old.swap(slots_);
  shift_ = 64 - std::countr_zero(capacity);
  const size_t mask = capacity - 1;
  for (const Slot& slot : old) {
    if (slot.entry == kEmpty) continue;
    size_t i = HomeOf(slot.key);
    while (slots_[i].entry != kEmpty) i = (i + 1) & mask;
    slots_[i] = slot;
  }
}

}  // namespace libra::train
