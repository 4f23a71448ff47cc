// Byte coding: the one helper every binary format of Libra is written and
// read with (the hot-path packets of wire.h, the runtime's message header,
// the hot path's control messages, the hot-set file, checkpoints).
//
//   - Fixed-width fields at a pointer: LoadBig16/32/64 and StoreBig16/32/64
//     (network order, the hot-path packets), LoadLittle<T> and
//     StoreLittle<T> (everything else).
//   - ByteWriter appends little-endian fields, length-prefixed strings,
//     lists and LEB128 varints to a std::string.
//   - ByteReader reads them back, never past its end: every Get returns
//     false (and leaves the reader truncated()) when the bytes run out, so a
//     caller either checks each read or checks truncated() once at the end.
//
// Little-endian is what the formats were defined as on the x86 hosts they
// were first written on (by memcpy of host integers); writing the bytes
// explicitly keeps them the same on any host.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace libra::wire {

// Integers, enums and floating-point numbers: what the coders read and write.
// (Not bool: a byte other than 0 or 1 would be no bool at all.)
template <typename T>
concept FixedWidth =
    !std::is_same_v<T, bool> && std::disjunction_v<std::is_arithmetic<T>, std::is_enum<T>> &&
    std::has_single_bit(sizeof(T)) && sizeof(T) <= 8;

namespace coding_detail {
// The unsigned integer of T's width, whose shifts write T byte by byte.
template <typename T>
using Bits = std::conditional_t<
    sizeof(T) == 1, std::uint8_t,
    std::conditional_t<sizeof(T) == 2, std::uint16_t,
                       std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>>;
}  // namespace coding_detail

// --- fixed-width fields at a pointer (the caller checked the bounds) ---

inline std::uint16_t LoadBig16(const std::uint8_t* p) {
  return static_cast<std::uint16_t>((p[0] << 8) | p[1]);
}
inline std::uint32_t LoadBig32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}
inline std::uint64_t LoadBig64(const std::uint8_t* p) {
  return (std::uint64_t{LoadBig32(p)} << 32) | LoadBig32(p + 4);
}
inline void StoreBig16(std::uint8_t* p, std::uint16_t v) {
  p[0] = static_cast<std::uint8_t>(v >> 8);
  p[1] = static_cast<std::uint8_t>(v);
}
inline void StoreBig32(std::uint8_t* p, std::uint32_t v) {
  p[0] = static_cast<std::uint8_t>(v >> 24);
  p[1] = static_cast<std::uint8_t>(v >> 16);
  p[2] = static_cast<std::uint8_t>(v >> 8);
  p[3] = static_cast<std::uint8_t>(v);
}
inline void StoreBig64(std::uint8_t* p, std::uint64_t v) {
  StoreBig32(p, static_cast<std::uint32_t>(v >> 32));
  StoreBig32(p + 4, static_cast<std::uint32_t>(v));
}

template <FixedWidth T>
T LoadLittle(const std::uint8_t* p) {
  coding_detail::Bits<T> bits = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    bits |= static_cast<coding_detail::Bits<T>>(coding_detail::Bits<T>{p[i]} << (8 * i));
  }
  return std::bit_cast<T>(bits);
}
template <FixedWidth T>
void StoreLittle(std::uint8_t* p, T value) {
  const auto bits = std::bit_cast<coding_detail::Bits<T>>(value);
  for (std::size_t i = 0; i < sizeof(T); ++i) p[i] = static_cast<std::uint8_t>(bits >> (8 * i));
}

// --- ByteWriter ---

class ByteWriter {
 public:
  // A little-endian field of sizeof(T) bytes.
  template <FixedWidth T>
  void Put(T value) {
    std::uint8_t bytes[sizeof(T)];
    StoreLittle(bytes, value);
    out_.append(reinterpret_cast<const char*>(bytes), sizeof(T));
  }
  // Little-endian fields, one after another (bulk on a little-endian host).
  template <FixedWidth T>
  void PutArray(std::span<const T> items) {
    if constexpr (std::endian::native == std::endian::little) {
      if (!items.empty()) PutBytes(items.data(), items.size_bytes());
    } else {
      for (const T item : items) Put(item);
    }
  }
  // A u64 count, then the items.
  template <FixedWidth T>
  void PutList(const std::vector<T>& items) {
    Put<std::uint64_t>(items.size());
    PutArray(std::span<const T>(items));
  }
  // A u32 length, then the bytes.
  void PutString(std::string_view text) {
    Put<std::uint32_t>(static_cast<std::uint32_t>(text.size()));
    out_.append(text);
  }
  void PutBytes(const void* data, std::size_t size) {
    out_.append(static_cast<const char*>(data), size);
  }
  // LEB128: seven bits a byte, low bits first, the high bit saying more
  // follow (1 byte for values below 128, 10 for the largest).
  void PutVarint(std::uint64_t value) {
    while (value >= 0x80) {
      out_.push_back(static_cast<char>((value & 0x7f) | 0x80));
      value >>= 7;
    }
    out_.push_back(static_cast<char>(value));
  }
  // `to - from` as a zigzag varint: a small difference of either sign stays
  // short.
  void PutDelta(std::uint64_t from, std::uint64_t to) {
    const auto delta = static_cast<std::int64_t>(to - from);
    PutVarint((static_cast<std::uint64_t>(delta) << 1) ^ static_cast<std::uint64_t>(delta >> 63));
  }

  void Reserve(std::size_t bytes) { out_.reserve(bytes); }
  const std::string& bytes() const { return out_; }
  std::size_t size() const { return out_.size(); }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

// --- ByteReader ---

// Reads what ByteWriter writes from bytes it does not own (they must outlive
// it). A read that would pass the end fails: it returns false, leaves its
// output and the position unchanged, and marks the reader truncated().
class ByteReader {
 public:
  explicit ByteReader(std::string_view bytes)
      : data_(reinterpret_cast<const std::uint8_t*>(bytes.data())), size_(bytes.size()) {}
  explicit ByteReader(std::span<const std::uint8_t> bytes)
      : data_(bytes.data()), size_(bytes.size()) {}

  template <FixedWidth T>
  bool Get(T* value) {
    if (!Has(sizeof(T))) return false;
    *value = LoadLittle<T>(data_ + at_);
    at_ += sizeof(T);
    return true;
  }
  // items.size() fields into `items`.
  template <FixedWidth T>
  bool GetArray(std::span<T> items) {
    if (!Has(items.size_bytes())) return false;
    if constexpr (std::endian::native == std::endian::little) {
      if (!items.empty()) std::memcpy(items.data(), data_ + at_, items.size_bytes());
      at_ += items.size_bytes();
    } else {
      for (T& item : items) Get(&item);
    }
    return true;
  }
  // A u64 count of items of `item_bytes` each, which the rest can hold (a
  // damaged count cannot make the caller allocate more than the bytes are).
  bool GetCount(std::uint64_t item_bytes, std::uint64_t* count) {
    const std::size_t start = at_;
    std::uint64_t n = 0;
    if (!Get(&n)) return false;
    if (n > remaining() / item_bytes) {
      at_ = start;
      return false;
    }
    *count = n;
    return true;
  }
  // A u64 count, then that many items, as PutList writes them.
  template <FixedWidth T>
  bool GetList(std::vector<T>* items) {
    std::uint64_t count = 0;
    if (!GetCount(sizeof(T), &count)) return false;
    items->resize(count);
    return GetArray(std::span<T>(*items));
  }
  // A u32 length, then that many bytes; fails on a length over `max_size`.
  bool GetString(std::string* text,
                 std::size_t max_size = std::numeric_limits<std::size_t>::max()) {
    const std::size_t start = at_;
    std::uint32_t n = 0;
    if (!Get(&n)) return false;
    if (n > max_size || !Has(n)) {
      at_ = start;
      return false;
    }
    text->assign(reinterpret_cast<const char*>(data_ + at_), n);
    at_ += n;
    return true;
  }
  // A varint as PutVarint writes it; fails on one that runs past the end,
  // past 64 bits, or is longer than it needs to be (so that what decodes
  // encodes back to the same bytes).
  bool GetVarint(std::uint64_t* value) {
    std::uint64_t result = 0;
    std::size_t at = at_;
    for (int shift = 0; shift < 64; shift += 7) {
      if (at == size_) {
        truncated_ = true;
        return false;
      }
      const std::uint8_t byte = data_[at++];
      const std::uint64_t bits = byte & 0x7f;
      if (shift == 63 && bits > 1) return false;
      result |= bits << shift;
      if ((byte & 0x80) == 0) {
        if (byte == 0 && shift > 0) return false;  // overlong
        *value = result;
        at_ = at;
        return true;
      }
    }
    return false;
  }
  bool GetVarint32(std::uint32_t* value) {
    std::uint64_t wide = 0;
    const std::size_t start = at_;
    if (!GetVarint(&wide)) return false;
    if (wide > std::numeric_limits<std::uint32_t>::max()) {
      at_ = start;
      return false;
    }
    *value = static_cast<std::uint32_t>(wide);
    return true;
  }
  // `from` plus a difference PutDelta wrote.
  bool GetDelta(std::uint64_t from, std::uint64_t* to) {
    std::uint64_t zigzag = 0;
    if (!GetVarint(&zigzag)) return false;
    const std::uint64_t delta = (zigzag >> 1) ^ (~(zigzag & 1) + 1);
    *to = from + delta;
    return true;
  }
  bool Skip(std::size_t n) {
    if (!Has(n)) return false;
    at_ += n;
    return true;
  }

  std::size_t position() const { return at_; }
  std::size_t remaining() const { return size_ - at_; }
  bool AtEnd() const { return at_ == size_; }
  // Some read asked for more bytes than were left.
  bool truncated() const { return truncated_; }

 private:
  bool Has(std::size_t n) {
    if (size_ - at_ >= n) return true;
    truncated_ = true;
    return false;
  }

  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t at_ = 0;
  bool truncated_ = false;
};

}  // namespace libra::wire
