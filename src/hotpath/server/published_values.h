// A server's copy of the values it last published for its hot keys: what
// it answers a worker's REPAIR with (a worker that lost REPLICAs, or reads
// while the switch is down), updated after each applied epoch with the keys
// that epoch changed.
//
// Not thread-safe: the server path calls it under its lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "hot/hot_set.h"
#include "hotpath/messages/control_messages.h"

namespace libra::hotpath {

class PublishedValues {
 public:
  // The server owns `owned` (ascending) of `hot_set`; forgets every value.
  void Reset(const hot::HotSet& hot_set, std::vector<hot::Key> owned);

  const std::vector<hot::Key>& keys() const { return keys_; }  // ascending
  const std::vector<int>& lens() const { return lens_; }
  std::size_t num_values() const { return num_values_; }

  // Whether it holds every owned value (a SetAll since the last Reset or
  // Clear).
  bool current() const { return values_.size() == num_values_ && !keys_.empty(); }
  void Clear() { values_.clear(); }

  // Every owned value, key after key in keys() order; false (and nothing
  // changes) when their number is not num_values().
  bool SetAll(std::span<const float> values);

  // The values of some owned keys, given by their hot-set entries (of the
  // hot set of the last Reset) with `lens`, values key after key; keys the
  // server does not own are skipped. Needs current(). A key is found by its
  // hot-set index, without a search.
  void Update(std::span<const hot::HotSet::Entry> entries, std::span<const int> lens,
              std::span<const float> values);

  // The published values of those of `keys` this server owns (nothing when
  // not current()), key after key, into `answer`.
  void Fill(std::span<const hot::Key> keys, Repair* answer) const;

  // The position of `key` in keys(), or keys().size().
  std::size_t IndexOf(hot::Key key) const;

 private:
  std::vector<hot::Key> keys_;
  std::vector<int> lens_;
  std::vector<std::size_t> offsets_;              // where each key's values start in values_
  std::vector<std::uint32_t> position_of_index_;  // by hot-set index: in keys_, or kNotOwned
  static constexpr std::uint32_t kNotOwned = ~std::uint32_t{0};
  std::size_t num_values_ = 0;
  std::vector<float> values_;  // every owned value, or empty
};

}  // namespace libra::hotpath
