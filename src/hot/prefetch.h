// A hint to load a cache line before it is read, for loops that look up
// scattered table entries a few keys ahead of their use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace libra::hot {

// Starts loading the cache line that holds `address` (never faults, reads
// nothing the caller sees). GCC 12's dead-code elimination drops a
// __builtin_prefetch whose condition reads memory (the hot set's "maybe
// hot" filter bit, a bounds check): HotSet::LookupAll had no prefetch
// instruction at all. On x86-64 the instruction is written as volatile
// assembly, which the compiler keeps.
inline void PrefetchForRead(const void* address) {
#if defined(__x86_64__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(address)));
#else
  __builtin_prefetch(address);
#endif
}

// For a loop that reads, at entry i, values[first[entries[i].index]] and
// on: fetches what it reads `ahead` entries on, in two steps, since the
// second read depends on the first (the entry's `first` `ahead` entries
// on; its values half as far, whose `first` came in ahead / 2 calls ago).
// An entry whose index is past `first` fetches nothing.
template <typename Entry, typename Value>
void PrefetchIndirectAhead(std::span<const Entry> entries, std::size_t i,
                           std::span<const std::uint64_t> first, std::span<const Value> values,
                           std::size_t ahead) {
  if (i + ahead < entries.size() && entries[i + ahead].index < first.size()) {
    PrefetchForRead(first.data() + entries[i + ahead].index);
  }
  if (i + ahead / 2 < entries.size() && entries[i + ahead / 2].index < first.size()) {
    const std::uint64_t at = first[entries[i + ahead / 2].index];
    if (at < values.size()) PrefetchForRead(values.data() + at);
  }
}

}  // namespace libra::hot
