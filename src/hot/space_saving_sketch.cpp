#include "hot/space_saving_sketch.h"

#include <algorithm>
#include <stdexcept>

namespace libra::hot {

SpaceSavingSketch::SpaceSavingSketch(size_t counters) : capacity_(counters), index_(counters) {
  if (counters == 0 || counters >= kNone) {
    throw std::invalid_argument("Space-Saving sketch needs between 1 and 2^32-2 counters");
  }
  entries_.reserve(counters);
  buckets_.reserve(counters);
}

size_t SpaceSavingSketch::BytesPerCounter() {
  return sizeof(Entry) + sizeof(Bucket) + HotKeyTable<uint32_t>::kWorstBytesPerKey;
}

void SpaceSavingSketch::Seed(std::vector<KeyCount> counts) {
  if (!entries_.empty()) throw std::logic_error("Space-Saving sketch seeded twice");
  if (counts.size() > capacity_) throw std::invalid_argument("more seed counts than counters");
  std::sort(counts.begin(), counts.end(),
            [](const KeyCount& a, const KeyCount& b) { return a.count < b.count; });
  uint32_t last = kNone;
  for (const KeyCount& seed : counts) {
    if (seed.count == 0) continue;
    if (last == kNone || buckets_[last].count != seed.count) last = NewBucket(seed.count, last);
    const auto entry = static_cast<uint32_t>(entries_.size());
    entries_.push_back(Entry{seed.key, seed.error, kNone, kNone, kNone});
    index_.FindOrInsert(seed.key) = entry;
    LinkEntry(entry, last);
  }
}

void SpaceSavingSketch::Add(Key key, uint64_t weight) {
  if (weight == 0) return;
  if (const uint32_t* entry = index_.Find(key)) {
    Increase(*entry, weight);
    return;
  }
  if (entries_.size() < capacity_) {
    const auto entry = static_cast<uint32_t>(entries_.size());
    entries_.push_back(Entry{key, 0, kNone, kNone, kNone});
    index_.FindOrInsert(key) = entry;
    LinkEntry(entry, BucketFor(weight, kNone));
    return;
  }
  // Full: the new key takes over a counter with the smallest count, and that
  // count becomes its error (it may have been counted there all along).
  const uint32_t victim = buckets_[smallest_].head;
  const uint64_t floor = buckets_[smallest_].count;
  index_.Erase(entries_[victim].key);
  entries_[victim].key = key;
  entries_[victim].error = floor;
  index_.FindOrInsert(key) = victim;
  Increase(victim, weight);
}

KeyCount SpaceSavingSketch::Estimate(Key key) const {
  if (const uint32_t* entry = index_.Find(key)) {
    const Entry& e = entries_[*entry];
    return KeyCount{key, buckets_[e.bucket].count, e.error};
  }
  const uint64_t floor = min_count();
  return KeyCount{key, floor, floor};
}

uint64_t SpaceSavingSketch::min_count() const {
  if (entries_.size() < capacity_ || smallest_ == kNone) return 0;
  return buckets_[smallest_].count;
}

void SpaceSavingSketch::Increase(uint32_t entry, uint64_t weight) {
  const uint32_t bucket = entries_[entry].bucket;
  const uint64_t count = buckets_[bucket].count + weight;
  const uint32_t next = buckets_[bucket].next;
  const bool alone = buckets_[bucket].head == entry && entries_[entry].next == kNone;
  if (alone && (next == kNone || buckets_[next].count > count)) {
    buckets_[bucket].count = count;  // order of buckets is unchanged
    return;
  }
  const uint32_t target = BucketFor(count, bucket);
  UnlinkEntry(entry);
  LinkEntry(entry, target);
}

uint32_t SpaceSavingSketch::BucketFor(uint64_t count, uint32_t after) {
  uint32_t candidate = after == kNone ? smallest_ : buckets_[after].next;
  while (candidate != kNone && buckets_[candidate].count < count) {
    after = candidate;
    candidate = buckets_[candidate].next;
  }
  if (candidate != kNone && buckets_[candidate].count == count) return candidate;
  return NewBucket(count, after);
}

uint32_t SpaceSavingSketch::NewBucket(uint64_t count, uint32_t after) {
  uint32_t bucket;
  if (!free_buckets_.empty()) {
    bucket = free_buckets_.back();
    free_buckets_.pop_back();
  } else {
    bucket = static_cast<uint32_t>(buckets_.size());
    buckets_.emplace_back();
  }
  const uint32_t next = after == kNone ? smallest_ : buckets_[after].next;
  buckets_[bucket] = Bucket{count, kNone, after, next};
  if (next != kNone) buckets_[next].prev = bucket;
  if (after == kNone) {
    smallest_ = bucket;
  } else {
    buckets_[after].next = bucket;
  }
  return bucket;
}

void SpaceSavingSketch::LinkEntry(uint32_t entry, uint32_t bucket) {
  Entry& e = entries_[entry];
  e.bucket = bucket;
  e.prev = kNone;
  e.next = buckets_[bucket].head;
  if (e.next != kNone) entries_[e.next].prev = entry;
  buckets_[bucket].head = entry;
}

void SpaceSavingSketch::UnlinkEntry(uint32_t entry) {
  Entry& e = entries_[entry];
  Bucket& b = buckets_[e.bucket];
  if (e.prev != kNone) entries_[e.prev].next = e.next;
  if (e.next != kNone) entries_[e.next].prev = e.prev;
  if (b.head == entry) b.head = e.next;
  if (b.head != kNone) return;
  // The bucket is empty: take it out of the list.
  if (b.prev != kNone) buckets_[b.prev].next = b.next;
  if (b.next != kNone) buckets_[b.next].prev = b.prev;
  if (smallest_ == e.bucket) smallest_ = b.next;
  free_buckets_.push_back(e.bucket);
}

}  // namespace libra::hot
