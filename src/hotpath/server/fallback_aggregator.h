// A server's stand-in for the switch while the switch is down (docs/design.md
// section 2, "Switch failure"): the workers send each epoch's hot values to
// the servers over ZeroMQ, and FallbackAggregator sums one server's share
// of them exactly as the switch would have. Each value goes through the
// switch's float32 -> fixed-point table, the sums use the stateful ALU's
// saturating add, and each sum goes to float32 through the leading-one
// table (wire/fixed_point.h), as the collector converts the switch's sums:
// integer addition does not depend on order, so an epoch summed here has
// the bits it would have had from the switch, and a job that falls back
// ends with the model of a job that did not.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "hot/hot_set.h"
#include "hotpath/server/hot_collector.h"
#include "wire/fixed_point.h"

namespace libra::hotpath {

class FallbackAggregator {
 public:
  // Sums the values of `owned_keys` (this server's hot keys) from
  // `num_workers` workers with scale 2^scale_bits. Throws
  // std::invalid_argument on a bad scale or a key not in the hot set.
  FallbackAggregator(std::shared_ptr<const hot::HotSet> hot_set,
                     std::span<const hot::Key> owned_keys, std::uint32_t num_workers,
                     int scale_bits);

  // Worker `worker`'s values of epoch `epoch` (keys owned here, each at most
  // once, values key after key). Returns the epoch's aggregate, as a
  // HotCollector would have collected it, once every worker's push is in.
  // A push that does not fit (a worker out of range or repeated, a key not
  // owned here or repeated, a wrong value count) is refused: the return is
  // nullopt and `error` (if given) says why; nothing of it is added.
  std::optional<CollectedEpoch> Add(std::uint32_t epoch, std::uint32_t worker,
                                    std::span<const hot::Key> keys, std::span<const float> vals,
                                    std::string* error = nullptr);

  // Drops the pushes of epochs up to and including `epoch` (collected from
  // the switch after all) and refuses later pushes for them.
  void Forget(std::uint32_t epoch);

  // Epochs with some but not all pushes in.
  std::size_t pending_epochs() const { return epochs_.size(); }

 private:
  // One epoch's sums, cell by cell in owned-key order.
  struct EpochSums {
    std::vector<bool> from_worker;
    std::vector<std::int32_t> sums;
    std::vector<bool> written;    // per owned key: some worker pushed it
    std::vector<bool> saturated;  // per owned key: a value saturated or was rejected
    std::uint32_t workers_in = 0;
  };

  CollectedEpoch Finish(std::uint32_t epoch, const EpochSums& sums) const;

  const std::shared_ptr<const hot::HotSet> hot_set_;
  const std::uint32_t num_workers_;
  const dataplane::FixedPointCodec codec_;
  std::vector<hot::Key> owned_;        // ascending
  std::vector<std::uint32_t> offset_;  // first cell of each owned key; back() = cells
  std::map<std::uint32_t, EpochSums> epochs_;
  std::optional<std::uint32_t> forgotten_through_;
};

}  // namespace libra::hotpath
