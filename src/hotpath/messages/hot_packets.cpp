#include "hotpath/messages/hot_packets.h"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>

namespace libra::hotpath {
namespace {

// Orders `cells` stably by `bucket_of(cell)`, which is below `buckets`.
template <typename BucketOf>
void CountingSortBy(std::vector<wire::CellValue>* cells, std::vector<wire::CellValue>* scratch,
                    std::uint32_t buckets, BucketOf bucket_of) {
  std::vector<std::uint32_t> next(std::size_t{buckets} + 1, 0);
  for (const wire::CellValue& cell : *cells) ++next[bucket_of(cell) + 1];
  for (std::size_t b = 1; b < next.size(); ++b) next[b] += next[b - 1];
  scratch->resize(cells->size());
  for (const wire::CellValue& cell : *cells) (*scratch)[next[bucket_of(cell)]++] = cell;
  cells->swap(*scratch);
}

}  // namespace

std::vector<std::uint32_t> CheckHotValues(const hot::HotSet& hot_set,
                                          std::span<const hot::Key> keys,
                                          std::span<const float> vals, std::span<const int> lens,
                                          std::vector<hot::HotSet::Entry>* entries) {
  std::vector<hot::HotSet::Entry> looked_up = hot_set.LookupAll(keys);
  std::vector<std::uint32_t> first_value = CheckHotValues(keys, looked_up, vals, lens);
  if (entries != nullptr) *entries = std::move(looked_up);
  return first_value;
}

std::vector<std::uint32_t> CheckHotValues(std::span<const hot::Key> keys,
                                          std::span<const hot::HotSet::Entry> entries,
                                          std::span<const float> vals, std::span<const int> lens) {
  if (!lens.empty() && lens.size() != keys.size()) {
    throw std::invalid_argument("hot push: " + std::to_string(keys.size()) + " keys but " +
                                std::to_string(lens.size()) + " lens");
  }
  if (entries.size() != keys.size()) {
    throw std::invalid_argument("hot push: " + std::to_string(keys.size()) + " keys but " +
                                std::to_string(entries.size()) + " hot-set entries");
  }
  std::vector<std::uint32_t> first_value(keys.size());
  std::uint64_t offset = 0;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (entries[i].index == hot::HotSet::kCold) {
      throw std::invalid_argument("hot push: key " + std::to_string(keys[i]) +
                                  " is not in the hot set");
    }
    const std::uint32_t len = entries[i].value_len;
    if (!lens.empty() && (lens[i] < 0 || static_cast<std::uint32_t>(lens[i]) != len)) {
      throw std::invalid_argument("hot push: key " + std::to_string(keys[i]) + " has " +
                                  std::to_string(lens[i]) + " values, the hot set says " +
                                  std::to_string(len));
    }
    first_value[i] = static_cast<std::uint32_t>(offset);
    offset += len;
  }
  if (offset != vals.size()) {
    throw std::invalid_argument("hot push: the keys take " + std::to_string(offset) +
                                " values but " + std::to_string(vals.size()) + " were given");
  }
  return first_value;
}

CellQueues QueueHotCells(const hot::HotSet& hot_set, std::span<const hot::Key> keys,
                         std::span<const std::uint32_t> first_value) {
  // Each array's values go out in order of cell index (row): packet k then
  // takes the k-th lowest row still queued in every array, so its cells lie
  // in the same or neighbouring rows. Rows a worker pushes whole become
  // one-row packets, and the switch touches fewer cache lines per packet
  // (docs/switch.md). Pushed in key order instead, the cells of a packet
  // scatter over the whole register memory. An entry is the cell index
  // (high half) and the value's position (low half), sorted as one word.
  CellQueues queued(hot_set.layout().num_arrays);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::span<const hot::CellAddress> cells = hot_set.CellsOf(hot_set.Lookup(keys[i]));
    for (std::size_t v = 0; v < cells.size(); ++v) {
      queued.at(cells[v].array)
          .push_back(QueuedCell(cells[v].index, first_value[i] + static_cast<std::uint32_t>(v)));
    }
  }
  for (std::vector<std::uint64_t>& queue : queued) std::sort(queue.begin(), queue.end());
  return queued;
}

RowOrderQueuer::RowOrderQueuer(std::shared_ptr<const hot::HotSet> hot_set)
    : hot_set_(std::move(hot_set)) {
  const hot::SwitchLayout& layout = hot_set_->layout();
  // Each array's bits start on a word of their own, so an array reads back
  // whole words.
  marked_.assign(std::size_t{layout.num_arrays} * ((layout.cells_per_array + 63) / 64), 0);
  position_.assign(layout.capacity(), 0);
  queues_.resize(layout.num_arrays);
}

const CellQueues& RowOrderQueuer::Queue(std::span<const hot::Key> keys,
                                        std::span<const hot::HotSet::Entry> entries,
                                        std::span<const std::uint32_t> first_value) {
  const hot::SwitchLayout& layout = hot_set_->layout();
  const std::size_t words_per_array = (layout.cells_per_array + 63) / 64;
  std::fill(marked_.begin(), marked_.end(), 0);
  for (std::vector<std::uint64_t>& queue : queues_) queue.clear();
  for (std::size_t i = 0; i < keys.size(); ++i) {
    hot_set_->PrefetchCellsAhead(entries, i);
    const std::span<const hot::CellAddress> cells = hot_set_->CellsOf(entries[i]);
    for (std::size_t v = 0; v < cells.size(); ++v) {
      const std::size_t word = cells[v].array * words_per_array + cells[v].index / 64;
      const std::uint64_t bit = std::uint64_t{1} << (cells[v].index % 64);
      if ((marked_[word] & bit) != 0) {
        queues_ = QueueHotCells(*hot_set_, keys, first_value);  // a key pushed twice
        return queues_;
      }
      marked_[word] |= bit;
      position_[std::size_t{cells[v].array} * layout.cells_per_array + cells[v].index] =
          first_value[i] + static_cast<std::uint32_t>(v);
    }
  }
  for (std::uint32_t j = 0; j < layout.num_arrays; ++j) {
    for (std::size_t w = 0; w < words_per_array; ++w) {
      for (std::uint64_t bits = marked_[j * words_per_array + w]; bits != 0; bits &= bits - 1) {
        const auto index = static_cast<std::uint32_t>(w * 64 + std::countr_zero(bits));
        queues_[j].push_back(
            QueuedCell(index, position_[std::size_t{j} * layout.cells_per_array + index]));
      }
    }
  }
  return queues_;
}

PackedValues PackQueuedCells(const wire::Header& header, const CellQueues& queued,
                             std::span<const float> vals) {
  const auto num_arrays = static_cast<std::uint32_t>(queued.size());
  if (num_arrays > wire::kMaxSlots) {
    throw std::invalid_argument("hot packets: more register arrays than slots in a packet");
  }
  std::size_t packets = 0;
  for (const std::vector<std::uint64_t>& queue : queued) packets = std::max(packets, queue.size());
  PackedValues out;
  out.packets.resize(packets);
  out.value_of_slot.assign(packets * num_arrays, kNoValue);
  std::array<wire::Slot, wire::kMaxSlots> wire_slots{};
  wire::Header packet_header = header;
  for (std::size_t k = 0; k < packets; ++k) {
    std::uint32_t used = 0;
    for (std::uint32_t j = 0; j < num_arrays; ++j) {
      if (k >= queued[j].size()) {
        wire_slots[j] = wire::Slot{};
        continue;
      }
      const auto index = static_cast<std::uint32_t>(queued[j][k] >> 32);
      const auto position = static_cast<std::uint32_t>(queued[j][k]);
      const float value = vals.empty() ? 0.0f : vals[position];
      wire_slots[j] = wire::Slot{true, false, index, std::bit_cast<std::uint32_t>(value)};
      out.value_of_slot[k * num_arrays + j] = position;
      used = j + 1;
    }
    packet_header.seq = static_cast<std::uint32_t>(k);
    packet_header.slot_count = static_cast<std::uint16_t>(used);
    EncodedPacket& packet = out.packets[k];
    packet.length = static_cast<std::uint16_t>(wire::Encode(
        packet_header, std::span<const wire::Slot>(wire_slots.data(), used), packet.bytes));
  }
  return out;
}

PackedValues PackHotValues(const hot::HotSet& hot_set, const wire::Header& header,
                           std::span<const hot::Key> keys,
                           std::span<const std::uint32_t> first_value,
                           std::span<const float> vals) {
  return PackQueuedCells(header, QueueHotCells(hot_set, keys, first_value), vals);
}

std::vector<EncodedPacket> PackUpdate(const hot::HotSet& hot_set, const wire::Header& header,
                                      std::span<const hot::Key> keys,
                                      std::span<const std::uint32_t> first_value,
                                      std::span<const float> vals,
                                      std::span<const hot::HotSet::Entry> entries) {
  if (!entries.empty() && entries.size() != keys.size()) {
    throw std::invalid_argument("hot update: " + std::to_string(keys.size()) + " keys but " +
                                std::to_string(entries.size()) + " hot-set entries");
  }
  std::vector<hot::HotSet::Entry> looked_up;
  entries = hot_set.EntriesOf(keys, entries, &looked_up);
  std::vector<wire::CellValue> cells;
  cells.reserve(vals.size());
  std::uint32_t rows = 0;  // the highest row written, plus one
  for (std::size_t i = 0; i < keys.size(); ++i) {
    // The written keys scatter over the hot set's arrays: without the
    // prefetch each key's two dependent reads waited on memory (80 % of
    // this function's samples in a forced LR job).
    hot_set.PrefetchCellsAhead(entries, i);
    const std::span<const hot::CellAddress> addresses = hot_set.CellsOf(entries[i]);
    for (std::size_t v = 0; v < addresses.size(); ++v) {
      cells.push_back(wire::CellValue{addresses[v].array, addresses[v].index,
                                      std::bit_cast<std::uint32_t>(vals[first_value[i] + v])});
      rows = std::max(rows, addresses[v].index + 1);
    }
  }
  // By row, and by array within a row, so that the values of one row share
  // one block header: two stable counting passes, by array and then by row.
  // A whole-switch set publishes tens of thousands of cells an epoch, and a
  // comparison sort of them was a tenth of a server's CPU (DeepFM, forced).
  // The row pass counts only the rows up to the highest written (heat
  // placement fills the first rows), not every row of the layout.
  std::vector<wire::CellValue> scratch;
  CountingSortBy(&cells, &scratch, hot_set.layout().num_arrays,
                 [](const wire::CellValue& cell) { return cell.array; });
  CountingSortBy(&cells, &scratch, rows, [](const wire::CellValue& cell) { return cell.index; });

  std::vector<EncodedPacket> packets;
  wire::Header packet_header = header;
  std::size_t begin = 0;
  while (begin < cells.size()) {
    const std::size_t end =
        begin + wire::UpdateCellsThatFit(std::span<const wire::CellValue>(cells).subspan(begin));
    packet_header.seq = static_cast<std::uint32_t>(packets.size());
    EncodedPacket& packet = packets.emplace_back();
    packet.length = static_cast<std::uint16_t>(wire::EncodeUpdate(
        packet_header, std::span<const wire::CellValue>(cells.data() + begin, end - begin),
        packet.bytes));
    begin = end;
  }
  return packets;
}

}  // namespace libra::hotpath
