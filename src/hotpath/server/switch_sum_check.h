// A server's check of an epoch's sums from the switch before it applies them
// (the check itself: messages/sum_check.h). Each worker's WRITTEN_KEYS of the
// epoch brings its term (AddTerm). The switch's fixed-point sums are checked
// as they are, but for the saturated ones, which are summed again from the
// workers' own values, with the switch's arithmetic, and replace the
// switch's. If the whole epoch then disagrees with the terms, something on
// the data path changed a sum (a forged DATA or RESULT), and the server sums
// the whole epoch from the workers' values instead.
//
// Not thread-safe: the server path calls it under its lock.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "hot/hot_set.h"
#include "hotpath/messages/control_messages.h"
#include "hotpath/messages/sum_check.h"
#include "hotpath/server/hot_collector.h"

namespace libra::hotpath {

class SwitchSumCheck {
 public:
  // For the sums of `num_workers` workers under the job's `key` and fixed
  // point `scale_bits` (throws std::invalid_argument on a bad scale or no
  // workers).
  SwitchSumCheck(std::shared_ptr<const hot::HotSet> hot_set, std::uint32_t num_workers,
                 const UpdateKey& key, int scale_bits);

  // Worker `worker`'s term of `epoch`. Ignored (false) for a worker out of
  // range, a term that is no element of the field, a second term of the same
  // worker and epoch, an epoch already forgotten, or a new epoch while
  // kMaxPendingEpochs are kept.
  bool AddTerm(std::uint32_t epoch, std::uint32_t worker, std::uint64_t term);
  static constexpr std::size_t kMaxPendingEpochs = 1024;

  // Whether every worker's term of `epoch` is in (Check needs them all).
  bool HasAllTerms(std::uint32_t epoch) const;

  // The keys of `epoch` (as collected) whose sums the switch could not keep:
  // the saturated ones. Ascending.
  std::vector<hot::Key> KeysToSumFromValues(const CollectedEpoch& epoch) const;

  // Sums the keys `from_values` (KeysToSumFromValues) from every worker's
  // `answers` (their values of exactly those keys, EveryWorkerAnswered) with
  // the switch's arithmetic, puts those sums in `epoch` in place of the
  // switch's (a key no worker pushed leaves; one that saturates stays in
  // `saturated_keys`; the epoch's `fixed` is then dropped), and checks the
  // whole epoch against the terms. Returns false (leaving `epoch` partly
  // replaced) when it does not agree, when a term is missing, when an answer
  // does not fit, or when `epoch` has no fixed-point sum for each value.
  bool Check(CollectedEpoch* epoch, std::span<const hot::Key> from_values,
             const std::vector<FallbackPush>& answers) const;

  // Drops the terms of the epochs through `epoch`.
  void Forget(std::uint32_t epoch);

 private:
  // Adds to `*found` the terms of one key's fixed-point sums from the switch.
  static void AddSwitchTerms(const SumCheck::Epoch& coefficients, hot::Key key,
                             std::span<const std::int32_t> sums, std::uint64_t* found);

  std::shared_ptr<const hot::HotSet> hot_set_;
  const std::uint32_t num_workers_;
  const int scale_bits_;
  SumCheck check_;
  std::map<std::uint32_t, std::vector<std::optional<std::uint64_t>>> terms_;  // by epoch, worker
  std::optional<std::uint32_t> forgotten_through_;
};

}  // namespace libra::hotpath
