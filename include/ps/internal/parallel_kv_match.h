// Merging one sorted key-value list into another by key, with several
// threads: for every key in both, dst's values op= src's values.
#pragma once

#include <algorithm>
#include <cstddef>
#include <thread>
#include <type_traits>
#include <vector>

#include "ps/internal/assign_op.h"
#include "ps/sarray.h"

namespace ps {

namespace internal {

template <typename V>
void Assign(const V& lhs, AssignOp op, V* rhs, std::true_type /*integral*/) {
  AssignFuncInt(lhs, op, rhs);
}
template <typename V>
void Assign(const V& lhs, AssignOp op, V* rhs, std::false_type /*integral*/) {
  AssignFunc(lhs, op, rhs);
}

// Matches the sorted keys [dst, dst_end) against the sorted [src, src_end);
// returns how many matched.
template <typename K, typename V>
size_t OrderedMatchRange(const K* src, const K* src_end, const V* src_val, const K* dst,
                         const K* dst_end, V* dst_val, int k, AssignOp op) {
  if (dst == dst_end) return 0;
  const K* s = std::lower_bound(src, src_end, *dst);
  src_val += (s - src) * k;
  size_t matched = 0;
  while (s != src_end && dst != dst_end) {
    if (*s < *dst) {
      ++s;
      src_val += k;
    } else if (*dst < *s) {
      ++dst;
      dst_val += k;
    } else {
      for (int i = 0; i < k; ++i) {
        Assign(src_val[i], op, &dst_val[i], std::is_integral<V>());
      }
      ++matched;
      ++s;
      src_val += k;
      ++dst;
      dst_val += k;
    }
  }
  return matched;
}

}  // namespace internal

// For each key both in src_key and in dst_key (each sorted and unique), the
// k values of that key in *dst_val op= its k values in src_val. *dst_val (an
// SArray or std::vector of V) ends up k * dst_key.size() long: values of
// unmatched keys are left as they were, or 0 where it had to grow. Returns
// the number of matched keys. `num_threads` threads share dst_key.
template <typename K, typename V, typename C>
size_t ParallelOrderedMatch(const SArray<K>& src_key, const SArray<V>& src_val,
                            const SArray<K>& dst_key, C* dst_val, int k = 1, AssignOp op = ASSIGN,
                            int num_threads = 1) {
  CHECK_GT(num_threads, 0);
  CHECK_GT(k, 0);
  CHECK_EQ(src_key.size() * k, src_val.size());
  CHECK_NOTNULL(dst_val);
  const size_t want = dst_key.size() * k;
  if (dst_val->size() != want) dst_val->resize(want);
  if (dst_key.empty() || src_key.empty()) return 0;

  const size_t n = dst_key.size();
  const size_t parts = std::min<size_t>(static_cast<size_t>(num_threads), n);
  std::vector<size_t> matched(parts, 0);
  std::vector<std::thread> threads;
  for (size_t p = 0; p < parts; ++p) {
    const size_t begin = n * p / parts, end = n * (p + 1) / parts;
    const K* dk = dst_key.data();
    V* dv = dst_val->data();
    auto run = [&, p, begin, end, dk, dv] {
      matched[p] =
          internal::OrderedMatchRange(src_key.data(), src_key.data() + src_key.size(),
                                      src_val.data(), dk + begin, dk + end, dv + begin * k, k, op);
    };
    if (p + 1 == parts) {
      run();
    } else {
      threads.emplace_back(run);
    }
  }
  for (std::thread& t : threads) t.join();
  size_t total = 0;
  for (size_t m : matched) total += m;
  return total;
}

}  // namespace ps
