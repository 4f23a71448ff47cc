// SArray<V>: a shared, reference-counted array. Copying an SArray shares the
// memory (no copy of the elements), which is how Libra moves keys and values
// from an application to the network without copying them (ZPush/ZPull).
// CopyFrom() is the explicit deep copy.
#pragma once

#include <algorithm>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <memory>
#include <ostream>
#include <type_traits>
#include <vector>

#include "ps/internal/logging.h"
#include "ps/range.h"

namespace ps {

template <typename V>
class SArray {
 public:
  SArray() = default;

  // n elements, each set to `value`.
  explicit SArray(size_t n, V value = V()) { resize(n, value); }

  // Wraps `data` without copying. If `deletable`, `delete[] data` runs when
  // the last SArray sharing it goes away.
  SArray(V* data, size_t size, bool deletable = false) {
    if (deletable) {
      reset(data, size, [](V* p) { delete[] p; });
    } else {
      reset(data, size, [](V*) {});
    }
  }

  // Deep copies.
  SArray(const std::vector<V>& vec) { CopyFrom(vec.data(), vec.size()); }
  SArray(std::initializer_list<V> list) { CopyFrom(list.begin(), list.end()); }

  // Shares the memory of an array of another element type; the byte size
  // must be a multiple of sizeof(V).
  template <typename W>
  explicit SArray(const SArray<W>& other) {
    *this = other;
  }
  template <typename W>
  SArray& operator=(const SArray<W>& other) {
    size_t bytes = other.size() * sizeof(W);
    CHECK_EQ(bytes % sizeof(V), 0u) << "SArray: byte size does not fit the new element type";
    size_ = bytes / sizeof(V);
    capacity_ = other.capacity() * sizeof(W) / sizeof(V);
    ptr_ = std::shared_ptr<V>(other.ptr(), reinterpret_cast<V*>(other.data()));
    return *this;
  }

  // Wraps `data`; `deleter` frees it when the last user goes away.
  template <typename Deleter>
  void reset(V* data, size_t size, Deleter deleter) {
    size_ = size;
    capacity_ = size;
    ptr_.reset(data, deleter);
  }

  template <typename ForwardIt>
  void CopyFrom(const ForwardIt& first, const ForwardIt& last) {
    size_t n = std::distance(first, last);
    V* data = new V[n];
    reset(data, n, [](V* p) { delete[] p; });
    std::copy(first, last, data);
  }
  void CopyFrom(const V* data, size_t size) { CopyFrom(data, data + size); }
  void CopyFrom(const SArray<V>& other) {
    if (this != &other) CopyFrom(other.data(), other.size());
  }

  // Grows or shrinks; new elements are `value`. Keeps the data when the
  // capacity suffices (the memory stays shared with other holders).
  void resize(size_t size, V value = V()) {
    const size_t old_size = size_;
    if (size > capacity_) reserve(size + 5);
    size_ = size;
    if (size > old_size) std::fill(data() + old_size, data() + size, value);
  }

  void reserve(size_t size) {
    if (capacity_ >= size) return;
    size_t old_size = size_;
    SArray<V> bigger(new V[size], size, true);
    std::copy(begin(), end(), bigger.begin());
    *this = bigger;
    size_ = old_size;
  }

  void clear() {
    size_ = 0;
    capacity_ = 0;
    ptr_.reset();
  }

  void push_back(const V& value) {
    if (size_ == capacity_) reserve(size_ * 2 + 5);
    data()[size_++] = value;
  }
  void pop_back() {
    if (size_) --size_;
  }
  void append(const SArray<V>& other) {
    if (other.empty()) return;
    size_t old_size = size_;
    resize(size_ + other.size());
    std::copy(other.begin(), other.end(), begin() + old_size);
  }

  // A view of [begin, end) that shares the memory.
  SArray<V> segment(size_t begin, size_t end) const {
    CHECK_GE(end, begin);
    CHECK_LE(end, size_);
    SArray<V> result;
    result.ptr_ = std::shared_ptr<V>(ptr_, data() + begin);
    result.size_ = end - begin;
    result.capacity_ = end - begin;
    return result;
  }

  V back() const {
    CHECK(!empty());
    return data()[size_ - 1];
  }
  V front() const {
    CHECK(!empty());
    return data()[0];
  }
  V& operator[](size_t i) { return data()[i]; }
  const V& operator[](size_t i) const { return data()[i]; }

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  V* begin() { return data(); }
  const V* begin() const { return data(); }
  V* end() { return data() + size_; }
  const V* end() const { return data() + size_; }
  V* data() const { return ptr_.get(); }
  const std::shared_ptr<V>& ptr() const { return ptr_; }

 private:
  size_t size_ = 0;
  size_t capacity_ = 0;
  std::shared_ptr<V> ptr_;
};

// The range of positions in sorted `arr` whose values lie in [lower, upper).
template <typename V>
Range FindRange(const SArray<V>& arr, V lower, V upper) {
  if (upper <= lower) return Range(0, 0);
  auto lb = std::lower_bound(arr.begin(), arr.end(), lower);
  auto ub = std::lower_bound(arr.begin(), arr.end(), upper);
  return Range(lb - arr.begin(), ub - arr.begin());
}

template <typename V>
std::ostream& operator<<(std::ostream& os, const SArray<V>& arr) {
  os << "[";
  size_t shown = std::min<size_t>(arr.size(), 10);
  for (size_t i = 0; i < shown; ++i) os << (i ? " " : "") << arr[i];
  if (arr.size() > shown) os << " ... (" << arr.size() << " in all)";
  return os << "]";
}

}  // namespace ps
