// Which server owns each hot key, as a worker needs it: to send an epoch's
// hot values to their servers while the switch is down (FALLBACK_PUSH), and
// to tell each server which of its keys an epoch's hot push wrote
// (WRITTEN_KEYS, by their positions among that server's keys).
//
// Immutable once built: safe to share between threads.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "hot/hot_set.h"
#include "hotpath/messages/control_messages.h"
#include "hotpath/messages/sum_check.h"

namespace libra::hotpath {

class HotKeyRoutes {
 public:
  // `owners[i]`: the server rank of hot key i (HotKeyOwners); `num_servers`
  // servers in all.
  HotKeyRoutes(std::shared_ptr<const hot::HotSet> hot_set, std::vector<std::uint32_t> owners,
               std::uint32_t num_servers);

  const std::vector<std::uint32_t>& owners() const { return owners_; }

  // Epoch `epoch`'s hot values of worker `worker` (`keys` hot, with the hot
  // set's lengths, their values in `vals`), one push per server, each with
  // its own keys in the order given; a server without any still gets one
  // (it counts the workers of every epoch).
  std::vector<FallbackPush> SplitByServer(std::uint32_t epoch, std::uint32_t worker,
                                          std::span<const hot::Key> keys,
                                          std::span<const float> vals) const;

  // One WRITTEN_KEYS per server that owns hot keys (indexed by server rank;
  // a server that owns none gets nothing, `has_keys` false), naming which of
  // its keys `hot_keys` holds, and with the term of their values `vals`
  // (the hot set's lengths, key after key) under `check`. Unsorted or
  // repeated keys are allowed. `entries`, when not empty, is the hot set's
  // Lookup of each key, as the caller's split found them.
  struct Report {
    bool has_keys = false;
    WrittenKeys keys;
  };
  std::vector<Report> WrittenKeysOf(std::uint32_t epoch, std::uint32_t worker,
                                    std::span<const hot::Key> hot_keys, std::span<const float> vals,
                                    const SumCheck& check,
                                    std::span<const hot::HotSet::Entry> entries = {}) const;

 private:
  std::shared_ptr<const hot::HotSet> hot_set_;
  std::vector<std::uint32_t> owners_;          // server of each hot key (hot-set order)
  std::vector<std::uint32_t> position_;        // hot key -> position among its server's keys
  std::vector<std::uint32_t> keys_of_server_;  // per server: how many hot keys it owns
};

}  // namespace libra::hotpath
