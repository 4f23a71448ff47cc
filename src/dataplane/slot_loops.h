// How the data path loops over the slots of a packet.
//
// Every stage does the same few integer operations on each of up to 64 slots,
// so these loops are most of the program's work. They are written so that
// the compiler vectorises them:
//
// * ForSlots runs a body over slots [0, count) in blocks of kSlotBlock with a
//   fixed trip count, then the remainder one by one. GCC's -O2 cost model
//   vectorises only loops that need no remainder, which the fixed-size blocks
//   are.
// * SlotMask folds a per-slot bit into a mask the same way. (GCC does not
//   vectorise a loop that stores per-slot words and folds a 64-bit mask
//   across slots at once; it does when the block's bits fold into 32 bits.)
// * LIBRA_SLOT_KERNEL marks the functions holding such loops. On x86-64 they
//   are compiled twice, for x86-64-v3 (AVX2: eight 32-bit lanes, per-lane
//   shifts, byte shuffles for the big-endian loads; BMI2: shifts by a
//   register without the CL dance) and for the baseline instruction set,
//   and the loader picks the one the CPU runs (function multiversioning), so
//   the binary still runs on any x86-64.
// * Kernels take their arrays as __restrict pointers: the packet's bytes are
//   uint8_t, which may alias anything, and would otherwise keep the compiler
//   from reordering loads and stores.
//
// The stateful part (register accesses) cannot be vectorised: each slot
// reads and writes its own cell, as each stateful ALU does.
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__x86_64__) && !defined(__AVX2__) && !defined(LIBRA_NO_MULTIVERSIONING)
#define LIBRA_SLOT_KERNEL [[gnu::target_clones("arch=x86-64-v3", "default")]]
#else
#define LIBRA_SLOT_KERNEL
#endif

namespace libra::dataplane {

inline constexpr std::size_t kSlotBlock = 8;

// Runs body(j) for every j in [0, count).
template <typename Body>
[[gnu::always_inline]] inline void ForSlots(std::size_t count, Body&& body) {
  std::size_t j = 0;
  for (; j + kSlotBlock <= count; j += kSlotBlock) {
    for (std::size_t k = 0; k < kSlotBlock; ++k) body(j + k);
  }
  for (; j < count; ++j) body(j);
}

// Runs bit(j) for every j in [0, count) and returns the mask whose bit j is
// bit(j) (0 or 1). Each block's bits are first gathered in a 32-bit word,
// which vectorises as a per-lane shift and an OR across lanes.
template <typename Bit>
[[gnu::always_inline]] inline std::uint64_t SlotMask(std::size_t count, Bit&& bit) {
  std::uint64_t mask = 0;
  std::size_t j = 0;
  for (; j + kSlotBlock <= count; j += kSlotBlock) {
    std::uint32_t block = 0;
    for (std::size_t k = 0; k < kSlotBlock; ++k) {
      block |= static_cast<std::uint32_t>(bit(j + k)) << k;
    }
    mask |= std::uint64_t{block} << j;
  }
  for (; j < count; ++j) mask |= std::uint64_t{static_cast<std::uint32_t>(bit(j))} << j;
  return mask;
}

// Visits the index of every set bit of `mask`, lowest first.
template <typename Visit>
[[gnu::always_inline]] inline void ForEachSlot(std::uint64_t mask, Visit&& visit) {
  while (mask != 0) {
    visit(static_cast<std::size_t>(__builtin_ctzll(mask)));
    mask &= mask - 1;
  }
}

}  // namespace libra::dataplane
