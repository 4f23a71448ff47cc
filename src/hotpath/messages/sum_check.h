// The end-to-end check of the sums a server takes from the switch.
//
// The switch adds the workers' fixed-point values and cannot sign what it
// adds up: a RESULT forged with the switch's address spoofed, or a DATA
// forged with a worker's, changes a sum, and so the model. But the sums are
// linear, and so is this check (a linear MAC over the prime field of
// p = 2^61 - 1): with each epoch's WRITTEN_KEYS (over the job's ZeroMQ
// channel, which the switch never sees, encrypted under PS_JOB_SECRET) a
// worker tells each server its term
//
//     T_w = sum over the values it pushed of r(e, k, j) * q   (mod p)
//
// where q is the fixed-point value the switch adds for the value (its
// convert stage: AddedValue) and r(e, k, j), in [1, p), is a coefficient
// keyed by the job's secret key (the UPDATE key, update_auth.h), the epoch
// e, the hot key k and the value's place j in it. An honest switch's sums
// S(k, j) = sum over workers of q then give
//
//     sum over cells of r(e, k, j) * S(k, j) = sum over workers of T_w,
//
// and a change to any set of sums by someone who does not know the
// coefficients keeps this equality for about one forgery in 2^61. The
// coefficients are a keyed mix, not a cryptographic PRF: a 64-bit finaliser
// (splitmix64's) of (s0 ^ key) + mix(s1 ^ epoch) + j * (an odd constant),
// s0 and s1 derived from the job's key by BLAKE2b: the check rests on
// the attacker never learning a term or a coefficient, which it does not see.
//
// A RESULT carries the switch's fixed-point sums as they are (not their
// float32, which would fix a sum only below 2^24 in magnitude), so the check
// sees exactly what the switch added. A saturated sum is no sum of what the
// workers pushed: a server takes those from the workers' own values
// (server/switch_sum_check.h).
#pragma once

#include <bit>
#include <cstdint>
#include <span>

#include "data/feature_hash.h"
#include "hot/hot_set.h"
#include "hotpath/messages/update_auth.h"
#include "wire/fixed_point.h"

namespace libra::hotpath {

class SumCheck {
 public:
  static constexpr std::uint64_t kPrime = (std::uint64_t{1} << 61) - 1;

  // Keyed by the job's `key`; `scale_bits` is the job's fixed point (throws
  // std::invalid_argument outside FixedPointCodec's range).
  SumCheck(const UpdateKey& key, int scale_bits);

  // The value the switch adds for float `value`: its fixed point, clamped
  // to +-INT32_MAX when it saturates, 0 when rejected (infinity, NaN).
  std::int32_t AddedValue(float value) const;

  // One epoch's coefficients: made once per epoch (one mix), then used
  // for every key and value of it (one mix per value).
  class Epoch {
   public:
    // r(e, key, j) * fixed (mod p), for `fixed` of any sign.
    std::uint64_t Term(hot::Key key, std::uint32_t j, std::int64_t fixed) const;
    // The term of one key's values (`values[j]` its place j).
    std::uint64_t KeyTerm(hot::Key key, std::span<const float> values) const;

   private:
    friend class SumCheck;
    Epoch(const SumCheck& check, std::uint32_t epoch);
    std::uint64_t KeyPart(hot::Key key) const;
    std::uint64_t Coefficient(std::uint64_t key_part, std::uint32_t j) const;
    const SumCheck* check_;
    std::uint64_t epoch_part_;
  };
  Epoch ForEpoch(std::uint32_t epoch) const { return Epoch(*this, epoch); }

  // The same, one at a time.
  std::uint64_t Term(std::uint32_t epoch, hot::Key key, std::uint32_t j, std::int64_t fixed) const {
    return ForEpoch(epoch).Term(key, j, fixed);
  }
  std::uint64_t KeyTerm(std::uint32_t epoch, hot::Key key, std::span<const float> values) const {
    return ForEpoch(epoch).KeyTerm(key, values);
  }

  // A worker's term of its values of one epoch: `keys[i]` has `lens[i]`
  // values, all of them in `vals`, key after key (as a push holds them).
  // Throws std::invalid_argument when the lengths do not add up to `vals`.
  std::uint64_t TermOf(std::uint32_t epoch, std::span<const hot::Key> keys,
                       std::span<const int> lens, std::span<const float> vals) const;

  static std::uint64_t Add(std::uint64_t a, std::uint64_t b) {
    const std::uint64_t s = a + b;  // both below p < 2^61: no overflow
    return s >= kPrime ? s - kPrime : s;
  }

 private:
  // Field arithmetic mod p, inline with the terms below: a worker computes
  // a term for every value it pushes, a server for every sum it checks.
  // x mod p for any 64-bit x (2^61 = 1 mod p).
  static std::uint64_t Reduce(std::uint64_t x) {
    const std::uint64_t r = (x & kPrime) + (x >> 61);
    return r >= kPrime ? r - kPrime : r;
  }
  // a * b mod p, a and b below p.
  static std::uint64_t MulMod(std::uint64_t a, std::uint64_t b) {
    const unsigned __int128 product = static_cast<unsigned __int128>(a) * b;
    const std::uint64_t low = static_cast<std::uint64_t>(product) & kPrime;
    const std::uint64_t high = static_cast<std::uint64_t>(product >> 61);
    return Add(low, Reduce(high));
  }
  // A signed integer as an element of the field.
  static std::uint64_t FieldOf(std::int64_t fixed) {
    if (fixed >= 0) return Reduce(static_cast<std::uint64_t>(fixed));
    const std::uint64_t magnitude = Reduce(0 - static_cast<std::uint64_t>(fixed));
    return magnitude == 0 ? 0 : kPrime - magnitude;
  }

  std::uint64_t seed_[2];
  dataplane::FixedPointCodec codec_;
};

inline std::int32_t SumCheck::AddedValue(float value) const {
  const dataplane::FixedValue fixed = codec_.ToFixed(std::bit_cast<std::uint32_t>(value));
  return fixed.status == dataplane::ConversionStatus::kRejected ? 0 : fixed.value;
}

// The mix is splitmix64's finaliser (every input bit moves about half the
// output bits).
inline SumCheck::Epoch::Epoch(const SumCheck& check, std::uint32_t epoch)
    : check_(&check), epoch_part_(libra::train::Mix64(check.seed_[1] ^ epoch)) {}

inline std::uint64_t SumCheck::Epoch::KeyPart(hot::Key key) const {
  return (check_->seed_[0] ^ key) + epoch_part_;
}

inline std::uint64_t SumCheck::Epoch::Coefficient(std::uint64_t key_part, std::uint32_t j) const {
  // Places apart by an odd constant (the golden ratio's): distinct inputs.
  const std::uint64_t r = Reduce(libra::train::Mix64(key_part + j * 0x9e3779b97f4a7c15ULL));
  return r == 0 ? 1 : r;  // never 0: every value counts
}

inline std::uint64_t SumCheck::Epoch::Term(hot::Key key, std::uint32_t j,
                                           std::int64_t fixed) const {
  return MulMod(Coefficient(KeyPart(key), j), FieldOf(fixed));
}

inline std::uint64_t SumCheck::Epoch::KeyTerm(hot::Key key, std::span<const float> values) const {
  const std::uint64_t key_part = KeyPart(key);
  std::uint64_t total = 0;
  for (std::uint32_t j = 0; j < values.size(); ++j) {
    const std::int32_t q = check_->AddedValue(values[j]);
    if (q != 0) total = Add(total, MulMod(Coefficient(key_part, j), FieldOf(q)));
  }
  return total;
}

}  // namespace libra::hotpath
