// A worker's copy of the hot parameters: one float per hot value, each with
// the epoch whose update it holds.
//
// Each server publishes, per epoch, the values it changed as a stream of
// UPDATE packets numbered from 0, the last one flagged LAST (its first epoch
// publishes every value it owns); the switch replicates them to every worker
// as REPLICA. The replica of server s has reached epoch e once every stream
// of s up to e is complete: a cell that no stream touched since still holds
// the right value. Values only move forward (a cell never takes an older
// epoch's value), so streams may arrive interleaved and repairs may overlap
// them. A lost packet leaves its stream incomplete: that server's keys are
// the gap to re-request, and a repair that brings all of them completes the
// server up to the repair's epoch.
//
// Not thread-safe; HotSender guards it with its lock.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "hot/hot_set.h"
#include "hotpath/messages/hot_packets.h"
#include "wire/wire.h"

namespace libra::hotpath {

// The packets one server's stream of one epoch lacks, as far as what came
// tells: `seqs` below the newest number that came (or below the stream's
// length, once its LAST came), and, while its LAST has not come, every
// number from `tail_from` on.
struct StreamLoss {
  std::uint16_t server = 0;
  std::uint32_t epoch = 0;
  std::vector<std::uint32_t> seqs;
  std::uint32_t tail_from = kNoStreamTail;
  friend bool operator==(const StreamLoss&, const StreamLoss&) = default;
};

class HotReplica {
 public:
  // `owner_of_key`: the server that publishes each hot key, in hot-set
  // order (empty: server 0 publishes every key). `first_epoch`: the first
  // epoch the servers publish. Throws std::invalid_argument when the owners
  // do not match the hot set.
  HotReplica(const hot::HotSet& hot_set, std::span<const std::uint16_t> owner_of_key = {},
             std::uint32_t first_epoch = 0);

  struct ApplyResult {
    std::uint32_t advanced = 0;          // cells that took the value
    std::uint32_t stale = 0;             // cells that already held this epoch or a newer one
    std::uint32_t unknown = 0;           // values naming a cell that holds no value of this server
    bool rejected = false;               // not a packet of any stream this replica expects
    std::uint32_t epochs_completed = 0;  // (server, epoch) streams this completed
  };
  // One REPLICA packet: header.node_id is the server, header.seq the
  // packet's number in its epoch's stream, kFlagLast marks the last one;
  // `cells` its values.
  ApplyResult Apply(const wire::Header& header, std::span<const wire::CellValue> cells);
  // Values of hot `keys`, vals key after key, as of `epoch` (a repair); a
  // server all of whose keys are given is complete up to `epoch`.
  ApplyResult ApplyKeys(std::uint32_t epoch, std::span<const hot::Key> keys,
                        std::span<const float> vals);

  // The newest epoch every publishing server is complete up to; nullopt
  // while some server has not completed its first.
  std::optional<std::uint32_t> MinEpoch() const;
  // The newest epoch of which any packet or repair has arrived.
  std::optional<std::uint32_t> MaxEpoch() const;
  // True when every one of these keys is current as of `epoch` (its server
  // complete up to it, or each of its cells holding `epoch` or later); when
  // `epoch` is nullopt, when each holds any value. Keys must be hot.
  bool Reached(std::span<const hot::Key> keys, std::optional<std::uint32_t> epoch) const;
  // The same for keys already looked up: their hot-set entries, all hot.
  bool Reached(std::span<const hot::HotSet::Entry> entries,
               std::optional<std::uint32_t> epoch) const;
  // Appends the keys' values; lens gets each key's value count.
  void Read(std::span<const hot::Key> keys, std::vector<float>* vals, std::vector<int>* lens) const;
  // The same by the keys' hot-set entries, all hot.
  void Read(std::span<const hot::HotSet::Entry> entries, std::vector<float>* vals,
            std::vector<int>* lens) const;
  // The keys of the servers not complete up to `epoch`, in hot-set order.
  std::vector<hot::Key> MissingKeys(std::uint32_t epoch) const;
  // What the streams of the servers not complete up to `epoch` lack, one
  // entry per incomplete stream from each one's oldest incomplete epoch to
  // `epoch`: the packets a server can resend to complete it.
  std::vector<StreamLoss> LostPackets(std::uint32_t epoch) const;

  // Whether server `server`'s stream of `epoch` is over but incomplete, as
  // far as order tells: its LAST packet came, or a packet of a later epoch
  // did (a server publishes its epochs one after another), and some packet
  // of it did not. Such a packet was lost, or its UPDATE is being resent.
  bool StreamHasHole(std::uint16_t server, std::uint32_t epoch) const;
  // Whether some server's stream of `epoch` has such a hole.
  bool EpochHasHole(std::uint32_t epoch) const;

 private:
  // Streams this far ahead of a server's next incomplete epoch are not kept:
  // the sender has at most two epochs in flight.
  static constexpr std::uint32_t kMaxEpochsAhead = 4;

  struct Stream {
    std::vector<bool> seen;  // per packet number
    std::uint32_t received = 0;
    std::optional<std::uint32_t> count;  // known once LAST arrived
    bool complete() const { return count && received == *count; }
  };
  struct Server {
    std::vector<std::uint32_t> keys;  // hot-key indices, ascending
    std::uint64_t num_values = 0;
    std::uint32_t next = 0;  // the oldest epoch not yet complete
    std::map<std::uint32_t, Stream> streams;
    std::optional<std::uint32_t> newest;  // the newest epoch a packet of it came for
  };

  // Cell tags are epoch + 1, so that 0 means "no value yet".
  bool Store(std::uint64_t value_index, std::uint32_t tag, float value);
  bool KeyCurrent(std::uint32_t key_index, std::uint32_t epoch) const;
  void CompleteUpTo(Server& server, std::uint32_t epoch);
  std::uint32_t AdvanceStreams(Server& server);

  // A value and the tag of the epoch it holds, side by side: a REPLICA's
  // cell is stored with one cache miss, not one per array.
  struct Held {
    float value = 0.0f;
    std::uint32_t tag = 0;
  };
  // Where a switch cell's value goes: its place in held_ and the server that
  // publishes it, found in one load per cell of a REPLICA (the hot set's cell
  // owner, the key's server and its first value were three).
  static constexpr std::uint32_t kNoValue = ~std::uint32_t{0};
  struct CellTarget {
    std::uint32_t value = kNoValue;  // index in held_; kNoValue: no hot value
    std::uint16_t server = 0;
  };

  const hot::HotSet& hot_set_;
  const std::uint32_t first_epoch_;
  std::vector<std::uint64_t> first_value_;  // per hot key, prefix sums of value_len
  std::vector<std::uint16_t> owner_;        // per hot key
  std::vector<Held> held_;                  // per hot value
  std::vector<CellTarget> cell_target_;     // per switch cell, array after array
  std::vector<Server> servers_;             // index = server id; those with no keys never publish
  std::optional<std::uint32_t> newest_;
};

}  // namespace libra::hotpath
