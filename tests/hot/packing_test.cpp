#include "hot/packing.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "hot/placement.h"

namespace libra::hot {
namespace {

TEST(LayoutAwarePacker, SendsEveryValueOnceAndNeverAnArrayTwice) {
  const SwitchLayout layout{16, 512, 2};
  std::vector<HotKey> keys;
  for (uint64_t k = 0; k < 1500; ++k) keys.push_back({k, uint32_t(1 + k % 5), 2000 - k});
  const HotSet set = PlaceHotSet(keys, layout, HeatPlacement());

  LayoutAwarePacker packer(layout.num_arrays);
  std::vector<SlotValue> packet(layout.num_arrays);
  std::mt19937_64 random(3);
  for (int push = 0; push < 5; ++push) {  // reused across pushes, as a sender does
    // Each value carries its own id, so the test can tell where it went.
    std::map<uint64_t, CellAddress> expected;
    std::vector<CellAddress> cells;
    uint64_t id = 0;
    for (uint32_t k = 0; k < set.size(); ++k, id += 8) {
      if (random() % 3 != 0) continue;
      std::vector<float> values;
      for (uint32_t v = 0; v < set.keys()[k].value_len; ++v) {
        expected[id + v] = set.CellsOf(k)[v];
        cells.push_back(set.CellsOf(k)[v]);
        values.push_back(float(id + v));
      }
      packer.PushKey(set.CellsOf(k), values);
    }
    const uint64_t promised = packer.packets_left();
    EXPECT_EQ(promised, CountLayoutAwarePackets(cells, layout.num_arrays).packets);

    uint64_t packets = 0;
    while (packer.NextPacket(packet)) {
      ++packets;
      for (uint32_t slot = 0; slot < layout.num_arrays; ++slot) {
        if (packet[slot].index == kEmptySlot) continue;
        const auto sent = expected.find(uint64_t(packet[slot].value));
        ASSERT_NE(sent, expected.end()) << "value sent twice or never pushed";
        EXPECT_EQ(sent->second, (CellAddress{slot, packet[slot].index}));  // slot j is array j
        expected.erase(sent);
      }
    }
    EXPECT_TRUE(expected.empty()) << expected.size() << " values never sent";
    EXPECT_EQ(packets, promised);
    EXPECT_EQ(packer.packets_left(), 0u);
  }
  EXPECT_EQ(packer.stats().conflicts, 0u);
  EXPECT_LE(packer.stats().utilisation(), 1.0);
  EXPECT_GT(packer.stats().utilisation(), 0.5);
}

TEST(LayoutAwarePacker, RejectsCellsAndBuffersOfTheWrongShape) {
  LayoutAwarePacker packer(4);
  EXPECT_THROW(packer.Push({4, 0}, 1.0f), std::out_of_range);
  std::vector<SlotValue> small(3);
  EXPECT_THROW(packer.NextPacket(small), std::invalid_argument);
  const std::vector<CellAddress> cells = {{0, 0}, {1, 0}};
  const std::vector<float> one_value = {1.0f};
  EXPECT_THROW(packer.PushKey(cells, one_value), std::invalid_argument);
  std::vector<SlotValue> packet(4);
  EXPECT_FALSE(packer.NextPacket(packet));  // nothing queued
}

TEST(SequentialPacking, CountsConflictsAndExtraPassesPacketByPacket) {
  const std::vector<CellAddress> cells = {{0, 0}, {0, 1}, {1, 0}, {2, 0},  // array 0 twice
                                          {3, 0}, {3, 1}, {3, 2}, {1, 1},  // array 3 thrice
                                          {2, 1}};
  const PackingStats stats = CountSequentialPackets(cells, 4);
  EXPECT_EQ(stats.packets, 3u);
  EXPECT_EQ(stats.values, 9u);
  EXPECT_EQ(stats.slots, 12u);
  EXPECT_EQ(stats.conflicts, 3u);
  EXPECT_EQ(stats.extra_passes, 3u);
  EXPECT_DOUBLE_EQ(stats.utilisation(), 0.75);

  const PackingStats layout_aware = CountLayoutAwarePackets(cells, 4);
  EXPECT_EQ(layout_aware.packets, 3u);  // array 3's queue is the longest
  EXPECT_EQ(layout_aware.conflicts, 0u);
  EXPECT_EQ(CountSequentialPackets({}, 4).packets, 0u);
}

}  // namespace
}  // namespace libra::hot
