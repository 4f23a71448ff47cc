// A plain model of the worker's replica (src/hotpath/hot_replica.h), which
// fuzz_hot_replica and fuzz_hotpath_receive compare the real one with. It is
// written from the rules, not from the code: cells hold (epoch tag, bits)
// and only move forward; each publishing server has one stream per epoch
// (packet numbers seen, the count LAST announced) and is complete up to the
// epochs before `next`, which advances in epoch order as streams complete or
// a repair brings every key of the server. The rejection rules are the
// implementation's, restated:
//   - the server publishes no key (or is beyond the owners);
//   - seq > the server's value count (every packet but a lone empty LAST
//     carries a value, so no stream is longer);
//   - an epoch at or past `next` + 4 (the sender has two in flight);
//   - for an epoch at or past `next`: seq at or past the count LAST gave,
//     a LAST below a packet already seen, or a second LAST that disagrees.
// Epochs and tags are uint32_t and wrap as the replica's do.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <vector>

#include "hot/hot_set.h"
#include "wire/wire.h"

namespace libra::fuzz {

class ReplicaModel {
 public:
  static constexpr std::uint32_t kMaxEpochsAhead = 4;

  struct Outcome {
    std::uint32_t advanced = 0, stale = 0, unknown = 0, epochs_completed = 0;
    bool rejected = false;
  };
  struct Cell {
    std::uint32_t tag = 0;  // epoch + 1; 0: no value yet
    std::uint32_t bits = 0;
  };

  // `owners` empty: server 0 publishes every key.
  ReplicaModel(const hot::HotSet& hot_set, std::vector<std::uint16_t> owners,
               std::uint32_t first_epoch)
      : hot_set_(hot_set), first_epoch_(first_epoch), owners_(std::move(owners)) {
    if (owners_.empty()) owners_.assign(hot_set.size(), 0);
    for (std::uint32_t k = 0; k < hot_set.size(); ++k) {
      const std::uint16_t s = owners_[k];
      if (servers_.size() <= s) servers_.resize(std::size_t{s} + 1);
      servers_[s].keys.insert(k);
      servers_[s].values += hot_set.keys()[k].value_len;
      first_cell_.push_back(static_cast<std::uint32_t>(cells_.size()));
      cells_.resize(cells_.size() + hot_set.keys()[k].value_len);
    }
    for (Server& server : servers_) server.next = first_epoch;
  }

  // One REPLICA packet and its values (cell `index` of register array
  // `array`).
  Outcome Apply(const wire::Header& h, std::span<const wire::CellValue> cells) {
    Outcome out;
    const bool last = (h.flags & wire::kFlagLast) != 0;
    if (h.node_id >= servers_.size() || servers_[h.node_id].keys.empty()) return Rejected();
    Server& server = servers_[h.node_id];
    const bool current = h.epoch >= server.next;
    if (h.seq > server.values) return Rejected();
    if (current && h.epoch - server.next >= kMaxEpochsAhead) return Rejected();
    if (current) {
      const auto it = server.streams.find(h.epoch);
      if (it != server.streams.end()) {
        const Stream& stream = it->second;
        if (stream.count && h.seq >= *stream.count) return Rejected();
        if (last && stream.seen.upper_bound(h.seq) != stream.seen.end()) return Rejected();
        if (last && stream.count && *stream.count != h.seq + 1) return Rejected();
      }
    }
    const std::uint32_t tag = h.epoch + 1;
    for (const wire::CellValue& cell : cells) {
      const auto owner = cell.array < hot_set_.layout().num_arrays
                             ? hot_set_.OwnerOf({cell.array, cell.index})
                             : std::nullopt;
      if (!owner || owners_[owner->key_index] != h.node_id) {
        ++out.unknown;
        continue;
      }
      Store(first_cell_[owner->key_index] + owner->offset, tag, cell.value, out);
    }
    newest_ = newest_ ? std::max(*newest_, h.epoch) : h.epoch;
    if (!current) return out;  // an epoch already complete: its values only
    Stream& stream = server.streams[h.epoch];
    stream.seen.insert(h.seq);
    if (last) stream.count = h.seq + 1;
    out.epochs_completed = Advance(server);
    return out;
  }

  // A repair: every value of `key_indices` (hot-set order numbers, each at
  // most once) as of `epoch`, `bits` value after value.
  Outcome ApplyKeys(std::uint32_t epoch, std::span<const std::uint32_t> key_indices,
                    std::span<const std::uint32_t> bits) {
    Outcome out;
    std::vector<std::set<std::uint32_t>> given(servers_.size());
    std::size_t at = 0;
    for (const std::uint32_t k : key_indices) {
      for (std::uint32_t v = 0; v < hot_set_.keys()[k].value_len; ++v) {
        Store(first_cell_[k] + v, epoch + 1, bits[at++], out);
      }
      given[owners_[k]].insert(k);
    }
    if (!key_indices.empty()) newest_ = newest_ ? std::max(*newest_, epoch) : epoch;
    for (std::size_t s = 0; s < servers_.size(); ++s) {
      Server& server = servers_[s];
      if (server.keys.empty() || given[s] != server.keys || epoch < server.next) continue;
      const std::uint32_t before = server.next;
      server.next = epoch + 1;
      server.streams.erase(server.streams.begin(), server.streams.lower_bound(server.next));
      Advance(server);
      out.epochs_completed += server.next - before;
    }
    return out;
  }

  std::optional<std::uint32_t> MinEpoch() const {
    std::optional<std::uint32_t> oldest;
    for (const Server& server : servers_) {
      if (server.keys.empty()) continue;
      if (server.next == first_epoch_) return std::nullopt;
      oldest = oldest ? std::min(*oldest, server.next - 1) : server.next - 1;
    }
    return oldest;
  }
  std::optional<std::uint32_t> MaxEpoch() const { return newest_; }

  // Key k (hot-set order) is current as of `epoch`: its server is complete
  // up to it or every cell holds it or later; nullopt: every cell holds a value.
  bool KeyReached(std::uint32_t k, std::optional<std::uint32_t> epoch) const {
    if (epoch && servers_[owners_[k]].next > *epoch) return true;
    const std::uint32_t tag = epoch ? *epoch + 1 : 1;
    for (std::uint32_t v = 0; v < hot_set_.keys()[k].value_len; ++v) {
      if (cells_[first_cell_[k] + v].tag < tag) return false;
    }
    return true;
  }
  // Keys (hot-set order numbers) whose server is not complete up to `epoch`.
  std::vector<std::uint32_t> MissingKeys(std::uint32_t epoch) const {
    std::vector<std::uint32_t> missing;
    for (std::uint32_t k = 0; k < owners_.size(); ++k) {
      if (servers_[owners_[k]].next <= epoch) missing.push_back(k);
    }
    return missing;
  }
  // Every value, hot-set order.
  const std::vector<Cell>& cells() const { return cells_; }

 private:
  struct Stream {
    std::set<std::uint32_t> seen;
    std::optional<std::uint32_t> count;  // from the LAST packet
    bool complete() const { return count && seen.size() == *count; }
  };
  struct Server {
    std::set<std::uint32_t> keys;
    std::uint64_t values = 0;
    std::uint32_t next = 0;  // the oldest epoch not complete
    std::map<std::uint32_t, Stream> streams;
  };

  static Outcome Rejected() {
    Outcome out;
    out.rejected = true;
    return out;
  }
  void Store(std::uint32_t cell, std::uint32_t tag, std::uint32_t bits, Outcome& out) {
    if (cells_[cell].tag >= tag) {
      ++out.stale;
      return;
    }
    cells_[cell] = {tag, bits};
    ++out.advanced;
  }
  // Completes the server's streams in epoch order from `next`.
  static std::uint32_t Advance(Server& server) {
    std::uint32_t completed = 0;
    for (auto it = server.streams.find(server.next);
         it != server.streams.end() && it->second.complete();
         it = server.streams.find(server.next)) {
      server.streams.erase(it);
      ++server.next;
      ++completed;
    }
    return completed;
  }

  const hot::HotSet& hot_set_;
  const std::uint32_t first_epoch_;
  std::vector<std::uint16_t> owners_;
  std::vector<std::uint32_t> first_cell_;
  std::vector<Cell> cells_;
  std::vector<Server> servers_;
  std::optional<std::uint32_t> newest_;
};

}  // namespace libra::fuzz
