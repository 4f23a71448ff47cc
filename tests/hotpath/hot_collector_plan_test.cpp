// HotCollector's COLLECT plan for an epoch whose written keys every worker
// reported: the rows mostly written are read whole (flag ROW), the other
// written cells packed, and each answer's values land on their keys.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "hotpath/messages/written_keys.h"
#include "hotpath/server/hot_collector.h"
#include "hotpath/small_hot_set.h"
#include "net/udp_socket.h"
#include "wire/fixed_point.h"
#include "wire/wire.h"

namespace libra::hotpath {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr std::uint32_t kJobId = 5;
using Cell = std::pair<std::uint32_t, std::uint32_t>;  // (array, row)

// The fixed-point sum the scripted switch answers for a cell (at the
// collector's scale, 2^16): distinct per cell, negative in odd arrays, some
// past 2^24 (a float32 holds it only rounded; the epoch still gets that
// float, and the exact sum beside it).
constexpr int kScale = 16;
std::int32_t FixedSumOf(const Cell& cell) {
  const std::int32_t sum = static_cast<std::int32_t>((cell.first * 1000 + cell.second) << 15) + 1;
  return cell.first % 2 == 1 ? -sum : sum;
}
float SumOf(const Cell& cell) {
  return std::bit_cast<float>(dataplane::FixedPointCodec(kScale).ToFloatBits(FixedSumOf(cell)));
}

// What one COLLECT asked: a whole row, or cells.
struct Asked {
  bool row = false;
  std::uint32_t index = 0;  // the row, when `row`
  std::vector<Cell> cells;  // (array j, cell index) of each valid slot, when not
};

// One epoch of a collector that owns every key of TwentyFiveRowHotSet (8
// arrays, 25 rows) and reads by row, after its only worker reported
// `written` (keys). The test plays the switch: READY, then a RESULT for each
// COLLECT with SumOf of every asked cell that holds a written key (the
// switch answers written cells only). Returns what each COLLECT asked and
// the epoch delivered.
std::pair<std::vector<Asked>, CollectedEpoch> CollectOnce(const std::set<hot::Key>& written) {
  const auto hot_set = testing::TwentyFiveRowHotSet();
  std::vector<hot::Key> owned;
  for (const hot::HotKey& key : hot_set->keys()) owned.push_back(key.key);
  std::sort(owned.begin(), owned.end());
  std::set<Cell> written_cells;
  std::vector<std::uint32_t> positions;
  for (std::uint32_t i = 0; i < owned.size(); ++i) {
    if (written.count(owned[i]) == 0) continue;
    positions.push_back(i);
    for (const hot::CellAddress& cell : hot_set->CellsOf(hot_set->Find(owned[i]))) {
      written_cells.insert({cell.array, cell.index});
    }
  }

  net::UdpSocket fake_switch{UdpEndpoint{0x7f000001, 0}};
  HotCollectorOptions options;
  options.job_id = kJobId;
  options.server_id = 0;
  options.switch_address = fake_switch.local();
  options.num_workers = 1;
  options.scale_bits = kScale;
  options.collect_by_row = true;
  options.written_keys_grace = 10s;  // the report is in before READY
  options.ready_poll = 10s;
  options.retry.initial_timeout = 10s;  // nothing is lost: no resend
  options.retry.min_timeout = 10s;
  options.retry.max_timeout = 10s;
  std::optional<CollectedEpoch> collected;
  std::mutex mutex;
  HotCollector collector(hot_set, owned, options, [&](CollectedEpoch epoch) {
    std::lock_guard lock(mutex);
    collected = std::move(epoch);
  });
  EXPECT_TRUE(collector.collects_by_row());
  collector.AddWrittenKeys(0, 0, EncodeKeySet(positions, static_cast<std::uint32_t>(owned.size())));

  wire::Header ready;
  ready.type = wire::MessageType::kReady;
  ready.job_id = kJobId;
  std::array<std::uint8_t, wire::kMaxMessageBytes + 64> buffer{};
  EXPECT_EQ(wire::Encode(ready, {}, buffer), wire::kHeaderBytes);
  EXPECT_TRUE(fake_switch.SendTo(std::span(buffer.data(), wire::kHeaderBytes), collector.local()));

  std::vector<Asked> asked;
  const Clock::time_point give_up = Clock::now() + 10s;
  auto done = [&] {
    std::lock_guard lock(mutex);
    return collected.has_value();
  };
  while (!done() && Clock::now() < give_up) {
    UdpEndpoint from;
    const int n = fake_switch.ReceiveFrom(buffer, &from, 20);
    if (n <= 0) continue;
    wire::Message request;
    EXPECT_EQ(wire::Decode(std::span(buffer.data(), static_cast<std::size_t>(n)), &request),
              wire::DecodeError::kNone);
    EXPECT_EQ(request.header.type, wire::MessageType::kCollect);
    EXPECT_EQ(request.header.flags & wire::kFlagRetransmission, 0);
    Asked one;
    one.row = (request.header.flags & wire::kFlagRow) != 0;
    std::vector<wire::Slot> answer;
    auto answer_cell = [&](std::uint32_t j, const Cell& cell) {
      if (written_cells.count(cell) == 0) return;
      answer.push_back({true, false, j, static_cast<std::uint32_t>(FixedSumOf(cell))});
    };
    if (one.row) {
      EXPECT_EQ(request.header.slot_count, 1);
      one.index = request.slots[0].index;
      for (std::uint32_t j = 0; j < hot_set->layout().num_arrays; ++j) {
        answer_cell(j, {j, one.index});
      }
    } else {
      for (std::uint32_t j = 0; j < request.header.slot_count; ++j) {
        if (!request.slots[j].valid) continue;
        one.cells.push_back({j, request.slots[j].index});
        answer_cell(j, one.cells.back());
      }
    }
    asked.push_back(one);
    wire::Header result = request.header;
    result.type = wire::MessageType::kResult;
    result.flags = 0;
    result.slot_count = static_cast<std::uint16_t>(answer.size());
    const std::size_t length = wire::Encode(result, answer, buffer);
    EXPECT_GT(length, 0u);
    EXPECT_TRUE(fake_switch.SendTo(std::span(buffer.data(), length), from));
  }
  std::lock_guard lock(mutex);
  EXPECT_TRUE(collected.has_value());
  const HotCollectorCounters counters = collector.counters();
  EXPECT_EQ(counters.epochs_by_written_keys, 1u);
  EXPECT_EQ(counters.collect_packets, asked.size());
  EXPECT_EQ(counters.retransmissions, 0u);
  std::uint64_t rows = 0;
  for (const Asked& one : asked) rows += one.row ? 1 : 0;
  EXPECT_EQ(counters.row_collect_packets, rows);
  return {asked, collected.value_or(CollectedEpoch{})};
}

TEST(HotCollectorPlan, RowsAtLeastHalfWrittenAreReadWholeTheOtherCellsPacked) {
  const auto hot_set = testing::TwentyFiveRowHotSet();
  const std::uint32_t num_arrays = hot_set->layout().num_arrays;
  std::map<std::uint32_t, std::vector<hot::Key>> keys_of_row;  // one value per key
  for (const hot::HotKey& key : hot_set->keys()) {
    keys_of_row[hot_set->CellsOf(hot_set->Find(key.key)).front().index].push_back(key.key);
  }
  // Rows 0-2 whole, half of row 3 (dense: read whole), 3 cells of row 4 and
  // one of each of rows 10-12 (sparse: packed).
  std::set<hot::Key> written;
  for (std::uint32_t row = 0; row < 3; ++row) {
    ASSERT_EQ(keys_of_row[row].size(), num_arrays);
    written.insert(keys_of_row[row].begin(), keys_of_row[row].end());
  }
  written.insert(keys_of_row[3].begin(), keys_of_row[3].begin() + num_arrays / 2);
  written.insert(keys_of_row[4].begin(), keys_of_row[4].begin() + 3);
  for (std::uint32_t row = 10; row < 13; ++row) written.insert(keys_of_row[row][row % num_arrays]);

  const auto [asked, epoch] = CollectOnce(written);
  std::set<std::uint32_t> rows_read;
  std::set<Cell> cells_read;
  for (const Asked& one : asked) {
    if (one.row) {
      EXPECT_TRUE(rows_read.insert(one.index).second) << "row " << one.index << " read twice";
    } else {
      std::set<std::uint32_t> arrays;
      for (const Cell& cell : one.cells) {
        EXPECT_TRUE(arrays.insert(cell.first).second) << "one access per array per packet";
        EXPECT_TRUE(cells_read.insert(cell).second);
      }
    }
  }
  EXPECT_EQ(rows_read, (std::set<std::uint32_t>{0, 1, 2, 3}));
  std::set<Cell> sparse;
  for (const hot::Key key : written) {
    const hot::CellAddress cell = hot_set->CellsOf(hot_set->Find(key)).front();
    if (cell.index >= 4) sparse.insert({cell.array, cell.index});
  }
  EXPECT_EQ(cells_read, sparse) << "exactly the written cells of the sparse rows, packed";
  // Packet k takes the k-th cell of every array: as many packets as the
  // array with most sparse cells has, fewer than the four rows they are in.
  std::map<std::uint32_t, std::size_t> cells_in_array;
  std::size_t deepest = 0;
  for (const Cell& cell : sparse) deepest = std::max(deepest, ++cells_in_array[cell.first]);
  EXPECT_EQ(asked.size() - rows_read.size(), deepest);
  EXPECT_LT(deepest, 4u);

  // Every written key got its cell's sum, from a ROW answer or a packed one.
  ASSERT_EQ(epoch.status, HotPathStatus::kOk);
  ASSERT_EQ(epoch.keys.size(), written.size());
  for (std::size_t i = 0; i < epoch.keys.size(); ++i) {
    EXPECT_TRUE(written.count(epoch.keys[i]) == 1);
    const hot::CellAddress cell = hot_set->CellsOf(hot_set->Find(epoch.keys[i])).front();
    EXPECT_EQ(epoch.vals[i], SumOf({cell.array, cell.index})) << "key " << epoch.keys[i];
    EXPECT_EQ(epoch.fixed[i], FixedSumOf({cell.array, cell.index})) << "key " << epoch.keys[i];
  }
}

TEST(HotCollectorPlan, AnEpochThatWritesEveryRowReadsRowsOnly) {
  const auto hot_set = testing::TwentyFiveRowHotSet();
  std::set<hot::Key> written;
  for (const hot::HotKey& key : hot_set->keys()) written.insert(key.key);
  const auto [asked, epoch] = CollectOnce(written);
  EXPECT_EQ(asked.size(), 25u);
  for (const Asked& one : asked) EXPECT_TRUE(one.row);
  EXPECT_EQ(epoch.keys.size(), written.size());
}

}  // namespace
}  // namespace libra::hotpath
