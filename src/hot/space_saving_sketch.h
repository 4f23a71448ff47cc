// Space-Saving with the "stream summary" layout: counters grouped in buckets
// of equal count, buckets in a list sorted by count, so that incrementing a
// counter and evicting the smallest one are both O(1) for unit weights.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "hot/hot_key_table.h"
#include "hot/update_counter.h"

namespace libra::hot {

class SpaceSavingSketch {
 public:
  explicit SpaceSavingSketch(size_t counters);

  // Bytes one counter costs at worst (entry, bucket, index slot), for budgeting.
  static size_t BytesPerCounter();

  // Starts from known counts (at most `counters` of them, any order).
  void Seed(std::vector<KeyCount> counts);
  void Add(Key key, uint64_t weight);

  KeyCount Estimate(Key key) const;
  // The smallest tracked count once every counter is in use, else 0: the
  // upper bound on the count of any key that is not tracked.
  uint64_t min_count() const;
  size_t size() const { return entries_.size(); }

  template <typename Fn>
  void ForEach(Fn&& fn) const {
    for (const Entry& entry : entries_) {
      fn(KeyCount{entry.key, buckets_[entry.bucket].count, entry.error});
    }
  }

 private:
  static constexpr uint32_t kNone = ~uint32_t{0};

  struct Entry {
    Key key;
    uint64_t error;
    uint32_t bucket, prev, next;  // prev/next: entries with the same count
  };
  struct Bucket {
    uint64_t count;
    uint32_t head;        // first entry with this count
    uint32_t prev, next;  // neighbouring buckets, smaller and larger counts
  };

  void Increase(uint32_t entry, uint64_t weight);
  // The bucket holding `count`, created right after `after` (kNone: at the
  // front) when absent. Walks forward from `after`.
  uint32_t BucketFor(uint64_t count, uint32_t after);
  uint32_t NewBucket(uint64_t count, uint32_t after);
  void LinkEntry(uint32_t entry, uint32_t bucket);
  void UnlinkEntry(uint32_t entry);

  size_t capacity_;
  std::vector<Entry> entries_;
  std::vector<Bucket> buckets_;
  std::vector<uint32_t> free_buckets_;
  uint32_t smallest_ = kNone;  // bucket with the smallest count
  HotKeyTable<uint32_t> index_;
};

}  // namespace libra::hot
