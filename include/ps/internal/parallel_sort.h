// Sorting an SArray with several threads: the array is cut into pieces of at
// least `grainsize` elements, each piece sorted on its own thread, and the
// sorted halves merged back pairwise.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <thread>

#include "ps/sarray.h"

namespace ps {

namespace internal {

template <typename T, class Fn>
void ParallelSortRange(T* data, size_t len, size_t grainsize, const Fn& cmp) {
  if (len <= grainsize) {
    std::sort(data, data + len, cmp);
    return;
  }
  const size_t half = len / 2;
  std::thread left([=, &cmp] { ParallelSortRange(data, half, grainsize, cmp); });
  ParallelSortRange(data + half, len - half, grainsize, cmp);
  left.join();
  std::inplace_merge(data, data + half, data + len, cmp);
}

}  // namespace internal

// Sorts *arr by `cmp` (ascending by default) with about `num_threads`
// threads. Small arrays are sorted on the calling thread.
template <typename T, class Fn = std::less<T>>
void ParallelSort(SArray<T>* arr, int num_threads = 2, const Fn& cmp = Fn()) {
  CHECK_GT(num_threads, 0);
  const size_t min_grain = 16 * 1024;
  const size_t grainsize = std::max(arr->size() / num_threads + 5, min_grain);
  internal::ParallelSortRange(arr->data(), arr->size(), grainsize, cmp);
}

}  // namespace ps
