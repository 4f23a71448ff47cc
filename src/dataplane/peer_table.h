// The peer table: exact match of a packet's source (IPv4, UDP port) to the
// worker or server it is. On a switch this is an exact-match table in SRAM;
// here it is an open-addressing hash table with a multiplicative hash, so a
// lookup is one multiply and, at the load factor kept (at most one half),
// almost always one probe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "wire/switch_job.h"

namespace libra::dataplane {

enum class PeerRole : std::uint8_t { kWorker, kServer };

struct Peer {
  PeerRole role = PeerRole::kWorker;
  std::uint16_t id = 0;
};

class PeerTable {
 public:
  // Adds `endpoint`; false (and nothing changes) when it is already present.
  bool Insert(const UdpEndpoint& endpoint, Peer peer) {
    if (2 * (size_ + 1) > entries_.size()) Grow();
    Entry& entry = Probe(endpoint.Key());
    if (entry.key != kEmpty) return false;
    entry = {endpoint.Key(), peer};
    ++size_;
    return true;
  }

  const Peer* Find(const UdpEndpoint& endpoint) const {
    if (size_ == 0) return nullptr;
    const Entry& entry = Probe(endpoint.Key());
    return entry.key == kEmpty ? nullptr : &entry.peer;
  }

  void Clear() {
    entries_.clear();
    size_ = 0;
    shift_ = 64;
  }
  std::size_t size() const { return size_; }

 private:
  // UdpEndpoint::Key() uses 48 bits, so no endpoint has this key.
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};

  struct Entry {
    std::uint64_t key = kEmpty;
    Peer peer;
  };

  std::size_t Slot(std::uint64_t key) const {
    return static_cast<std::size_t>((key * 0x9e3779b97f4a7c15ull) >> shift_);
  }

  // The entry holding `key`, or the empty one where it would go.
  Entry& Probe(std::uint64_t key) {
    return const_cast<Entry&>(static_cast<const PeerTable&>(*this).Probe(key));
  }
  const Entry& Probe(std::uint64_t key) const {
    const std::size_t mask = entries_.size() - 1;
    for (std::size_t i = Slot(key);; i = (i + 1) & mask) {
      if (entries_[i].key == key || entries_[i].key == kEmpty) return entries_[i];
    }
  }

  void Grow() {
    std::vector<Entry> old = std::move(entries_);
    const std::size_t capacity = old.empty() ? 16 : 2 * old.size();
    entries_.assign(capacity, Entry{});
    shift_ = 64 - __builtin_ctzll(capacity);
    for (const Entry& entry : old) {
      if (entry.key != kEmpty) Probe(entry.key) = entry;
    }
  }

  std::vector<Entry> entries_;  // size 0 or a power of two
  std::size_t size_ = 0;
  int shift_ = 64;
};

}  // namespace libra::dataplane
