#include "hotpath/worker/hot_replica.h"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>

#include "hot/prefetch.h"

namespace libra::hotpath {

HotReplica::HotReplica(const hot::HotSet& hot_set, std::span<const std::uint16_t> owner_of_key,
                       std::uint32_t first_epoch)
    : hot_set_(hot_set),
      first_epoch_(first_epoch),
      first_value_(hot_set.size() + 1, 0),
      owner_(hot_set.size(), 0),
      held_(hot_set.num_values()),
      cell_target_(hot_set.layout().capacity()) {
  if (!owner_of_key.empty() && owner_of_key.size() != hot_set.size()) {
    throw std::invalid_argument("replica: " + std::to_string(owner_of_key.size()) + " owners for " +
                                std::to_string(hot_set.size()) + " hot keys");
  }
  if (!owner_of_key.empty()) owner_.assign(owner_of_key.begin(), owner_of_key.end());
  const std::uint16_t last_server =
      owner_.empty() ? 0 : *std::max_element(owner_.begin(), owner_.end());
  servers_.resize(std::size_t{last_server} + 1);
  for (Server& server : servers_) server.next = first_epoch;
  for (std::uint32_t k = 0; k < hot_set.size(); ++k) {
    const std::uint32_t len = hot_set.keys()[k].value_len;
    first_value_[k + 1] = first_value_[k] + len;
    servers_[owner_[k]].keys.push_back(k);
    servers_[owner_[k]].num_values += len;
  }
  const std::uint32_t cells_per_array = hot_set.layout().cells_per_array;
  for (std::uint64_t v = 0; v < hot_set.num_values(); ++v) {
    const hot::CellAddress cell = hot_set.cells()[v];
    const hot::HotSet::CellOwner owner = *hot_set.OwnerOf(cell);
    cell_target_[std::uint64_t{cell.array} * cells_per_array + cell.index] =
        CellTarget{static_cast<std::uint32_t>(v), owner_[owner.key_index]};
  }
}

bool HotReplica::Store(std::uint64_t value_index, std::uint32_t tag, float value) {
  Held& held = held_[value_index];
  if (held.tag >= tag) return false;
  held = Held{value, tag};
  return true;
}

HotReplica::ApplyResult HotReplica::Apply(const wire::Header& header,
                                          std::span<const wire::CellValue> cells) {
  ApplyResult result;
  const std::uint32_t epoch = header.epoch;
  const bool last = (header.flags & wire::kFlagLast) != 0;
  if (header.node_id >= servers_.size() || servers_[header.node_id].keys.empty()) {
    result.rejected = true;
    return result;
  }
  Server& server = servers_[header.node_id];
  // Every packet but a lone empty LAST carries a value: no stream is longer.
  const bool current = epoch >= server.next;
  if ((current && epoch - server.next >= kMaxEpochsAhead) || header.seq > server.num_values) {
    result.rejected = true;
    return result;
  }
  Stream* stream = nullptr;
  if (current) {
    stream = &server.streams[epoch];
    const bool beyond_end = stream->count && header.seq >= *stream->count;
    const bool end_before_seen =
        last &&
        std::find(stream->seen.begin() + std::min<std::size_t>(header.seq + 1, stream->seen.size()),
                  stream->seen.end(), true) != stream->seen.end();
    const bool other_end = last && stream->count && *stream->count != header.seq + 1;
    if (beyond_end || end_before_seen || other_end) {
      if (stream->received == 0 && !stream->count) server.streams.erase(epoch);
      result.rejected = true;
      return result;
    }
  }

  const hot::SwitchLayout& layout = hot_set_.layout();
  for (const wire::CellValue& cell : cells) {
    const CellTarget target =
        cell.array < layout.num_arrays && cell.index < layout.cells_per_array
            ? cell_target_[std::uint64_t{cell.array} * layout.cells_per_array + cell.index]
            : CellTarget{};
    if (target.value == kNoValue || target.server != header.node_id) {
      ++result.unknown;
      continue;
    }
    const bool advanced = Store(target.value, epoch + 1, std::bit_cast<float>(cell.value));
    advanced ? ++result.advanced : ++result.stale;
  }
  newest_ = std::max(newest_.value_or(epoch), epoch);
  server.newest = std::max(server.newest.value_or(epoch), epoch);
  if (stream == nullptr) return result;  // an epoch already complete: values only

  if (stream->seen.size() <= header.seq) stream->seen.resize(std::size_t{header.seq} + 1, false);
  if (!stream->seen[header.seq]) {
    stream->seen[header.seq] = true;
    ++stream->received;
  }
  if (last) stream->count = header.seq + 1;
  if (stream->complete()) result.epochs_completed = AdvanceStreams(server);
  return result;
}

bool HotReplica::StreamHasHole(std::uint16_t server_id, std::uint32_t epoch) const {
  if (server_id >= servers_.size()) return false;
  const Server& server = servers_[server_id];
  if (server.keys.empty() || epoch < server.next) return false;
  const auto stream = server.streams.find(epoch);
  const bool ended = (stream != server.streams.end() && stream->second.count) ||
                     (server.newest && *server.newest > epoch);
  return ended && !(stream != server.streams.end() && stream->second.complete());
}

bool HotReplica::EpochHasHole(std::uint32_t epoch) const {
  for (std::size_t s = 0; s < servers_.size(); ++s) {
    if (StreamHasHole(static_cast<std::uint16_t>(s), epoch)) return true;
  }
  return false;
}

std::uint32_t HotReplica::AdvanceStreams(Server& server) {
  std::uint32_t completed = 0;
  for (auto it = server.streams.find(server.next);
       it != server.streams.end() && it->first == server.next && it->second.complete();
       it = server.streams.find(server.next)) {
    server.streams.erase(it);
    ++server.next;
    ++completed;
  }
  return completed;
}

void HotReplica::CompleteUpTo(Server& server, std::uint32_t epoch) {
  if (epoch < server.next) return;
  server.next = epoch + 1;
  server.streams.erase(server.streams.begin(), server.streams.lower_bound(server.next));
  AdvanceStreams(server);
}

HotReplica::ApplyResult HotReplica::ApplyKeys(std::uint32_t epoch, std::span<const hot::Key> keys,
                                              std::span<const float> vals) {
  ApplyResult result;
  std::size_t position = 0;
  // Distinct keys per server: a key named twice must not stand in for
  // another one when deciding whether a server's keys all came.
  std::vector<std::uint64_t> keys_given(servers_.size(), 0);
  std::vector<bool> given(hot_set_.size(), false);
  for (const hot::Key key : keys) {
    const auto [index, len] = hot_set_.Lookup(key);
    if (index == hot::HotSet::kCold) {
      throw std::invalid_argument("replica: key " + std::to_string(key) + " is not hot");
    }
    if (position + len > vals.size()) {
      throw std::invalid_argument("replica: fewer values than the keys take");
    }
    for (std::uint32_t v = 0; v < len; ++v) {
      const bool advanced = Store(first_value_[index] + v, epoch + 1, vals[position++]);
      advanced ? ++result.advanced : ++result.stale;
    }
    if (!given[index]) {
      given[index] = true;
      ++keys_given[owner_[index]];
    }
  }
  if (position != vals.size()) {
    throw std::invalid_argument("replica: more values than the keys take");
  }
  if (!keys.empty()) newest_ = std::max(newest_.value_or(epoch), epoch);
  for (std::size_t s = 0; s < servers_.size(); ++s) {
    Server& server = servers_[s];
    if (server.keys.empty() || keys_given[s] < server.keys.size()) continue;
    const std::uint32_t before = server.next;
    CompleteUpTo(server, epoch);
    result.epochs_completed += server.next - before;
  }
  return result;
}

std::optional<std::uint32_t> HotReplica::MinEpoch() const {
  std::optional<std::uint32_t> oldest;
  for (const Server& server : servers_) {
    if (server.keys.empty()) continue;
    if (server.next == first_epoch_) return std::nullopt;
    oldest = std::min(oldest.value_or(server.next - 1), server.next - 1);
  }
  return oldest;
}

std::optional<std::uint32_t> HotReplica::MaxEpoch() const { return newest_; }

bool HotReplica::KeyCurrent(std::uint32_t key_index, std::uint32_t epoch) const {
  if (servers_[owner_[key_index]].next > epoch) return true;
  for (std::uint64_t i = first_value_[key_index]; i < first_value_[key_index + 1]; ++i) {
    if (held_[i].tag < epoch + 1) return false;
  }
  return true;
}

bool HotReplica::Reached(std::span<const hot::Key> keys, std::optional<std::uint32_t> epoch) const {
  return Reached(hot_set_.LookupAll(keys), epoch);
}

bool HotReplica::Reached(std::span<const hot::HotSet::Entry> entries,
                         std::optional<std::uint32_t> epoch) const {
  for (const hot::HotSet::Entry& entry : entries) {
    if (epoch) {
      if (!KeyCurrent(entry.index, *epoch)) return false;
      continue;
    }
    for (std::uint64_t i = first_value_[entry.index]; i < first_value_[entry.index + 1]; ++i) {
      if (held_[i].tag == 0) return false;
    }
  }
  return true;
}

void HotReplica::Read(std::span<const hot::Key> keys, std::vector<float>* vals,
                      std::vector<int>* lens) const {
  Read(hot_set_.LookupAll(keys), vals, lens);
}

void HotReplica::Read(std::span<const hot::HotSet::Entry> entries, std::vector<float>* vals,
                      std::vector<int>* lens) const {
  std::size_t total = 0;
  for (const hot::HotSet::Entry& entry : entries) total += entry.value_len;
  std::size_t at = vals->size();
  vals->resize(at + total);
  if (lens != nullptr) lens->reserve(lens->size() + entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    // A read's keys scatter over both arrays: fetched a few keys ahead.
    hot::PrefetchIndirectAhead(entries, i, std::span<const std::uint64_t>(first_value_),
                               std::span<const Held>(held_), hot::HotSet::kLookAhead);
    const hot::HotSet::Entry& entry = entries[i];
    const std::uint64_t first = first_value_[entry.index];
    for (std::uint64_t v = first; v < first + entry.value_len; ++v) (*vals)[at++] = held_[v].value;
    if (lens != nullptr) lens->push_back(static_cast<int>(entry.value_len));
  }
}

std::vector<hot::Key> HotReplica::MissingKeys(std::uint32_t epoch) const {
  std::vector<hot::Key> missing;
  for (std::uint32_t k = 0; k < hot_set_.size(); ++k) {
    if (servers_[owner_[k]].next <= epoch) missing.push_back(hot_set_.keys()[k].key);
  }
  return missing;
}

std::vector<StreamLoss> HotReplica::LostPackets(std::uint32_t epoch) const {
  std::vector<StreamLoss> lost;
  for (std::size_t id = 0; id < servers_.size(); ++id) {
    const Server& server = servers_[id];
    if (server.keys.empty()) continue;
    // A server many epochs behind is repaired by its keys, not its packets.
    constexpr std::uint32_t kMostStreams = 8;
    const std::uint32_t from =
        epoch - server.next >= kMostStreams ? epoch - kMostStreams + 1 : server.next;
    for (std::uint32_t e = from; e <= epoch && server.next <= epoch; ++e) {
      StreamLoss loss;
      loss.server = static_cast<std::uint16_t>(id);
      loss.epoch = e;
      const auto it = server.streams.find(e);
      if (it == server.streams.end()) {
        loss.tail_from = 0;  // nothing of it came
      } else {
        const Stream& stream = it->second;
        if (stream.complete()) continue;
        const std::uint32_t known =
            stream.count ? *stream.count : static_cast<std::uint32_t>(stream.seen.size());
        for (std::uint32_t seq = 0; seq < known; ++seq) {
          if (seq >= stream.seen.size() || !stream.seen[seq]) loss.seqs.push_back(seq);
        }
        if (!stream.count) loss.tail_from = known;
      }
      lost.push_back(std::move(loss));
    }
  }
  return lost;
}

}  // namespace libra::hotpath
