#include "hotpath/messages/sum_check.h"

#include <bit>
#include <cstring>
#include <stdexcept>

#include "data/feature_hash.h"

namespace libra::hotpath {
namespace {

// The splitmix64 finaliser: every input bit moves about half the output bits.
using libra::train::Mix64;

// x mod p for any 64-bit x (p = 2^61 - 1: 2^61 = 1 mod p).
std::uint64_t Reduce(std::uint64_t x) {
  std::uint64_t r = (x & SumCheck::kPrime) + (x >> 61);
  return r >= SumCheck::kPrime ? r - SumCheck::kPrime : r;
}

// a * b mod p, a and b below p.
std::uint64_t MulMod(std::uint64_t a, std::uint64_t b) {
  const unsigned __int128 product = static_cast<unsigned __int128>(a) * b;
  const std::uint64_t low = static_cast<std::uint64_t>(product) & SumCheck::kPrime;
  const std::uint64_t high = static_cast<std::uint64_t>(product >> 61);
  return SumCheck::Add(low, Reduce(high));
}

// A signed integer as an element of the field.
std::uint64_t FieldOf(std::int64_t fixed) {
  if (fixed >= 0) return Reduce(static_cast<std::uint64_t>(fixed));
  const std::uint64_t magnitude = Reduce(0 - static_cast<std::uint64_t>(fixed));
  return magnitude == 0 ? 0 : SumCheck::kPrime - magnitude;
}

}  // namespace

SumCheck::SumCheck(const UpdateKey& key, int scale_bits) : codec_(scale_bits) {
  const std::array<std::uint8_t, 16> seed = DeriveFromKey(key, "libra sum check");
  std::memcpy(seed_, seed.data(), seed.size());
}

std::int32_t SumCheck::AddedValue(float value) const {
  const dataplane::FixedValue fixed = codec_.ToFixed(std::bit_cast<std::uint32_t>(value));
  return fixed.status == dataplane::ConversionStatus::kRejected ? 0 : fixed.value;
}

SumCheck::Epoch::Epoch(const SumCheck& check, std::uint32_t epoch)
    : check_(&check), epoch_part_(Mix64(check.seed_[1] ^ epoch)) {}

std::uint64_t SumCheck::Epoch::KeyPart(hot::Key key) const {
  return (check_->seed_[0] ^ key) + epoch_part_;
}

std::uint64_t SumCheck::Epoch::Coefficient(std::uint64_t key_part, std::uint32_t j) const {
  // Places apart by an odd constant (the golden ratio's): distinct inputs.
  const std::uint64_t r = Reduce(Mix64(key_part + j * 0x9e3779b97f4a7c15ULL));
  return r == 0 ? 1 : r;  // never 0: every value counts
}

std::uint64_t SumCheck::Epoch::Term(hot::Key key, std::uint32_t j, std::int64_t fixed) const {
  return MulMod(Coefficient(KeyPart(key), j), FieldOf(fixed));
}

std::uint64_t SumCheck::Epoch::KeyTerm(hot::Key key, std::span<const float> values) const {
  const std::uint64_t key_part = KeyPart(key);
  std::uint64_t total = 0;
  for (std::uint32_t j = 0; j < values.size(); ++j) {
    const std::int32_t q = check_->AddedValue(values[j]);
    if (q != 0) total = Add(total, MulMod(Coefficient(key_part, j), FieldOf(q)));
  }
  return total;
}

std::uint64_t SumCheck::TermOf(std::uint32_t epoch, std::span<const hot::Key> keys,
                               std::span<const int> lens, std::span<const float> vals) const {
  if (keys.size() != lens.size()) throw std::invalid_argument("sum check: a length per key");
  const Epoch of_epoch = ForEpoch(epoch);
  std::uint64_t total = 0;
  std::size_t v = 0;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::size_t len = static_cast<std::size_t>(lens[i]);
    if (lens[i] < 0 || len > vals.size() - v) {
      throw std::invalid_argument("sum check: the lengths exceed the values");
    }
    total = Add(total, of_epoch.KeyTerm(keys[i], vals.subspan(v, len)));
    v += len;
  }
  if (v != vals.size()) throw std::invalid_argument("sum check: values beyond the lengths");
  return total;
}

}  // namespace libra::hotpath
