#include "hot/packing.h"

#include <algorithm>

namespace libra::hot {

PackingStats& PackingStats::operator+=(const PackingStats& other) {
  packets += other.packets;
  values += other.values;
  slots += other.slots;
  conflicts += other.conflicts;
  extra_passes += other.extra_passes;
  return *this;
}

LayoutAwarePacker::LayoutAwarePacker(uint32_t num_arrays)
    : queues_(num_arrays), sent_(num_arrays, 0) {
  if (num_arrays == 0) throw std::invalid_argument("packer: needs at least one register array");
}

void LayoutAwarePacker::Clear() {
  for (auto& queue : queues_) queue.clear();
  std::fill(sent_.begin(), sent_.end(), 0);
}

void LayoutAwarePacker::PushKey(std::span<const CellAddress> cells, std::span<const float> values) {
  if (cells.size() != values.size()) {
    throw std::invalid_argument("packer: a key's cells and values differ in number");
  }
  for (size_t i = 0; i < cells.size(); ++i) Push(cells[i], values[i]);
}

uint64_t LayoutAwarePacker::packets_left() const {
  size_t longest = 0;
  for (size_t a = 0; a < queues_.size(); ++a)
    longest = std::max(longest, queues_[a].size() - sent_[a]);
  return longest;
}

bool LayoutAwarePacker::NextPacket(std::span<SlotValue> slots) {
  if (slots.size() != queues_.size()) {
    throw std::invalid_argument("packer: packet buffer must have one slot per register array");
  }
  uint64_t filled = 0;
  for (size_t a = 0; a < queues_.size(); ++a) {
    if (sent_[a] < queues_[a].size()) {
      slots[a] = queues_[a][sent_[a]++];
      ++filled;
    } else {
      slots[a] = SlotValue{kEmptySlot, 0.0f};
    }
  }
  if (filled == 0) {
    Clear();
    return false;
  }
  stats_.packets += 1;
  stats_.values += filled;
  stats_.slots += queues_.size();
  return true;
}

PackingStats CountLayoutAwarePackets(std::span<const CellAddress> cells, uint32_t num_arrays) {
  std::vector<uint64_t> queue(num_arrays, 0);
  for (const CellAddress& cell : cells) ++queue.at(cell.array);
  PackingStats stats;
  stats.values = cells.size();
  stats.packets = cells.empty() ? 0 : *std::max_element(queue.begin(), queue.end());
  stats.slots = stats.packets * num_arrays;
  return stats;
}

PackingStats CountSequentialPackets(std::span<const CellAddress> cells, uint32_t num_arrays) {
  PackingStats stats;
  std::vector<uint32_t> uses(num_arrays, 0);  // of each array in the current packet
  for (size_t begin = 0; begin < cells.size(); begin += num_arrays) {
    const size_t end = std::min(cells.size(), begin + num_arrays);
    uint32_t most_uses = 0;
    for (size_t i = begin; i < end; ++i) {
      const uint32_t used = ++uses.at(cells[i].array);
      if (used > 1) ++stats.conflicts;
      most_uses = std::max(most_uses, used);
    }
    for (size_t i = begin; i < end; ++i) uses[cells[i].array] = 0;
    stats.packets += 1;
    stats.values += end - begin;
    stats.extra_passes += most_uses - 1;
  }
  stats.slots = stats.packets * num_arrays;
  return stats;
}

}  // namespace libra::hot
