// Hashes that turn raw feature values into 64-bit keys.
#pragma once

#include <cstdint>
#include <string_view>

namespace libra::train {

// The splitmix64 finaliser: a bijection on 64-bit integers that scatters
// nearby inputs over the whole range. Keys go through it before they reach
// the parameter servers, whose key ranges are split evenly over [0, 2^64).
constexpr uint64_t Mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

// Inverse of Mix64, so a server-side key can be mapped back to the feature.
constexpr uint64_t UnMix64(uint64_t x) {
  x ^= x >> 31 ^ x >> 62;
  x *= 0x319642b2d24d8ec3ULL;
  x ^= x >> 27 ^ x >> 54;
  x *= 0x96de1b173f119089ULL;
  x ^= x >> 30 ^ x >> 60;
  return x;
}

// FNV-1a over the bytes; short categorical tokens make anything fancier moot.
constexpr uint64_t HashBytes(std::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

// The key of value `token_hash` in field `field`: the same token in two
// fields gives two different keys.
constexpr uint64_t FieldKey(uint32_t field, uint64_t token_hash) {
  return Mix64(token_hash ^ (static_cast<uint64_t>(field + 1) * 0x9e3779b97f4a7c15ULL));
}

}  // namespace libra::train
