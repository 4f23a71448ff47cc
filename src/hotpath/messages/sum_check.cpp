#include "hotpath/messages/sum_check.h"

#include <cstring>
#include <stdexcept>

namespace libra::hotpath {

SumCheck::SumCheck(const UpdateKey& key, int scale_bits) : codec_(scale_bits) {
  const std::array<std::uint8_t, 16> seed = DeriveFromKey(key, "libra sum check");
  std::memcpy(seed_, seed.data(), seed.size());
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
