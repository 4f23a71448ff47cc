// A hint to load a cache line before it is read, for loops that look up
// scattered table entries a few keys ahead of their use.
#pragma once

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

}  // namespace libra::hot
