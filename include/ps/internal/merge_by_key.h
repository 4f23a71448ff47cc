// The answer of a pull that Libra's hot path split: the servers' parts and
// the hot part (read from the worker's replica) merged into one part in key
// order (KVWorker's pull callback).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "ps/internal/logging.h"

namespace ps {

namespace internal {

// The values `p`'s lens give (or `fixed` a key when it has none); a
// malformed lens list (of another count, or with a negative length) gives a
// count no values match.
template <typename KV>
size_t LengthsCover(const KV& p, int fixed) {
  if (p.lens.empty()) return p.keys.size() * static_cast<size_t>(fixed);
  if (p.lens.size() != p.keys.size()) return ~size_t{0};
  size_t total = 0;
  for (int len : p.lens) {
    if (len < 0) return ~size_t{0};
    total += static_cast<size_t>(len);
  }
  return total;
}

// Values per key of a part without lens.
template <typename KV>
int FixedLength(const KV& p) {
  return p.keys.empty() ? 0 : static_cast<int>(p.vals.size() / p.keys.size());
}

// `p` with its keys in order, each key's values moved along with it.
template <typename KV>
KV SortedByKey(const KV& p) {
  const int fixed = FixedLength(p);
  CHECK_EQ(LengthsCover(p, fixed), p.vals.size())
      << "a pull's answer has lengths that do not cover its values";
  std::vector<size_t> first(p.keys.size());
  std::vector<size_t> order(p.keys.size());
  for (size_t i = 0, offset = 0; i < p.keys.size(); ++i) {
    first[i] = offset;
    offset += static_cast<size_t>(p.lens.empty() ? fixed : p.lens[i]);
    order[i] = i;
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return p.keys[a] < p.keys[b]; });
  KV sorted;
  for (size_t i : order) {
    const int len = p.lens.empty() ? fixed : p.lens[i];
    sorted.keys.push_back(p.keys[i]);
    sorted.lens.push_back(len);
    for (int j = 0; j < len; ++j) sorted.vals.push_back(p.vals[first[i] + static_cast<size_t>(j)]);
  }
  return sorted;
}

// `parts` and `hot` as one part in key order, with lens. Each part is
// normally a run of keys in order (a slice of the pull's sorted keys, or
// the hot part in the pull's order), so the runs are merged by a cursor per
// part, straight into the merged arrays; a part out of order is sorted
// first. A part whose lens do not cover its values fails a CHECK (throws
// ps::Error).
template <typename KV>
KV MergeByKey(std::vector<KV> parts, const KV& hot) {
  parts.push_back(hot);
  struct Cursor {
    const KV* part;
    int fixed;   // values per key when the part has no lens
    size_t key;  // next key of the part
    size_t val;  // its first value
    bool done() const { return key == part->keys.size(); }
    int len() const { return part->lens.empty() ? fixed : part->lens[key]; }
  };
  std::vector<Cursor> cursors;
  size_t total_keys = 0, total_vals = 0;
  for (KV& p : parts) {
    if (!std::is_sorted(p.keys.begin(), p.keys.end())) p = SortedByKey(p);
    const int fixed = FixedLength(p);
    CHECK_EQ(LengthsCover(p, fixed), p.vals.size())
        << "a pull's answer has lengths that do not cover its values";
    total_keys += p.keys.size();
    total_vals += p.vals.size();
    cursors.push_back(Cursor{&p, fixed, 0, 0});
  }
  KV merged;
  merged.keys.resize(total_keys);
  merged.lens.resize(total_keys);
  merged.vals.resize(total_vals);
  // Raw pointers and a plain copy loop: a key has a few values, too few for
  // a memmove call each.
  auto* keys = merged.keys.data();
  auto* lens = merged.lens.data();
  auto* vals = merged.vals.data();
  for (size_t out_key = 0; out_key < total_keys; ++out_key) {
    Cursor* next = nullptr;
    for (Cursor& c : cursors) {
      if (!c.done() && (next == nullptr || c.part->keys[c.key] < next->part->keys[next->key])) {
        next = &c;
      }
    }
    const int len = next->len();
    keys[out_key] = next->part->keys[next->key];
    lens[out_key] = len;
    const auto* from = next->part->vals.data() + next->val;
    for (int j = 0; j < len; ++j) *vals++ = from[j];
    next->val += static_cast<size_t>(len);
    ++next->key;
  }
  return merged;
}

}  // namespace internal

}  // namespace ps
