// Packing a push into wire packets: every value lands exactly once, in the
// slot of its register array, with the right cell and bits; bad pushes are
// refused with the offending key named.
#include "hotpath/messages/hot_packets.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <map>
#include <memory>
#include <optional>
#include <random>

#include "hot/placement.h"

namespace libra::hotpath {
namespace {

using hot::CellAddress;
using hot::HotKey;
using hot::HotSet;

HotSet MakeHotSet() {
  std::vector<HotKey> keys;
  for (std::uint32_t k = 0; k < 20; ++k) keys.push_back({1000 + k, 1 + k % 3, 100u - k});
  return hot::PlaceHotSet(keys, hot::SwitchLayout{4, 16, 2}, hot::HeatPlacement());
}

TEST(HotPackets, EveryValueGoesOnceToItsArraySlot) {
  const HotSet set = MakeHotSet();
  std::vector<hot::Key> keys = {1019, 1000, 1005, 1007, 1012};
  std::vector<float> vals;
  std::map<std::pair<std::uint32_t, std::uint32_t>, float> expected;  // (array, index) -> value
  for (const hot::Key key : keys) {
    const auto cells = set.CellsOf(set.Find(key));
    for (const CellAddress& cell : cells) {
      vals.push_back(0.25f * static_cast<float>(vals.size()) - 1.0f);
      expected[{cell.array, cell.index}] = vals.back();
    }
  }
  const auto first_value = CheckHotValues(set, keys, vals, {});
  wire::Header header;
  header.type = wire::MessageType::kData;
  header.job_id = 7;
  header.node_id = 2;
  header.epoch = 5;
  const PackedValues packed = PackHotValues(set, header, keys, first_value, vals);
  ASSERT_FALSE(packed.packets.empty());
  ASSERT_EQ(packed.value_of_slot.size(), packed.packets.size() * 4);

  std::size_t values_seen = 0;
  for (std::size_t k = 0; k < packed.packets.size(); ++k) {
    wire::Message message;
    ASSERT_EQ(wire::Decode(packed.packets[k].view(), &message), wire::DecodeError::kNone);
    EXPECT_EQ(message.header.type, wire::MessageType::kData);
    EXPECT_EQ(message.header.job_id, 7u);
    EXPECT_EQ(message.header.node_id, 2u);
    EXPECT_EQ(message.header.epoch, 5u);
    EXPECT_EQ(message.header.seq, k);
    ASSERT_LE(message.header.slot_count, 4u);
    // Trailing holes are cut, so the last slot always carries a value.
    ASSERT_GT(message.header.slot_count, 0u);
    EXPECT_TRUE(message.slots[message.header.slot_count - 1].valid);
    for (std::uint32_t j = 0; j < message.header.slot_count; ++j) {
      const wire::Slot& slot = message.slots[j];
      const std::uint32_t position = packed.value_of_slot[k * 4 + j];
      if (!slot.valid) {
        EXPECT_EQ(position, kNoValue);
        continue;
      }
      const auto it = expected.find({j, slot.index});
      ASSERT_NE(it, expected.end()) << "slot " << j << " names a cell of another array";
      EXPECT_EQ(std::bit_cast<float>(slot.value), it->second);
      EXPECT_EQ(vals[position], it->second);
      expected.erase(it);
      ++values_seen;
    }
  }
  EXPECT_TRUE(expected.empty());
  EXPECT_EQ(values_seen, vals.size());
}

// Keys pushed in any order: each array's cells go out lowest row first, so
// a packet's cells lie in the same or neighbouring rows, and a push of whole
// rows is one packet per row, every slot on that row.
TEST(HotPackets, EachArraysCellsGoOutInRowOrderAndWholeRowsMakeOneRowPackets) {
  std::vector<HotKey> hot_keys;
  for (std::uint32_t k = 0; k < 64; ++k) hot_keys.push_back({5000 + k, 1, 1000u - k});
  const HotSet set = hot::PlaceHotSet(hot_keys, hot::SwitchLayout{4, 16, 2}, hot::HeatPlacement());
  std::vector<hot::Key> keys;
  for (const HotKey& key : hot_keys) keys.push_back(key.key);
  std::reverse(keys.begin(), keys.end());  // the coldest rows first
  const std::vector<float> vals(keys.size(), 1.0f);
  wire::Header header;
  header.type = wire::MessageType::kData;
  const PackedValues packed =
      PackHotValues(set, header, keys, CheckHotValues(set, keys, vals, {}), vals);
  ASSERT_EQ(packed.packets.size(), 16u);  // 64 values, 4 arrays: every row whole
  std::array<std::int64_t, 4> last_row = {-1, -1, -1, -1};
  for (std::size_t k = 0; k < packed.packets.size(); ++k) {
    wire::Message message;
    ASSERT_EQ(wire::Decode(packed.packets[k].view(), &message), wire::DecodeError::kNone);
    ASSERT_EQ(message.header.slot_count, 4u);
    for (std::uint32_t j = 0; j < 4; ++j) {
      ASSERT_TRUE(message.slots[j].valid);
      EXPECT_GT(std::int64_t{message.slots[j].index}, last_row[j]) << "packet " << k;
      last_row[j] = message.slots[j].index;
      EXPECT_EQ(message.slots[j].index, message.slots[0].index) << "packet " << k;
      // The value still maps back to its key.
      const hot::CellAddress cell{j, message.slots[j].index};
      const std::uint32_t position = packed.value_of_slot[k * 4 + j];
      EXPECT_EQ(set.CellsOf(set.Find(keys[position]))[0], cell);
    }
  }
}

TEST(HotPackets, EncodedPacketPatchesEpochAndFlagsInPlace) {
  const HotSet set = MakeHotSet();
  const std::vector<hot::Key> keys = {1001};
  wire::Header header;
  header.type = wire::MessageType::kCollect;
  const std::vector<std::uint32_t> first_value = {0};
  PackedValues packed = PackHotValues(set, header, keys, first_value, {});
  ASSERT_EQ(packed.packets.size(), 1u);
  packed.packets[0].SetEpoch(123456);
  packed.packets[0].SetFlags(wire::kFlagRetransmission);
  wire::Message message;
  ASSERT_EQ(wire::Decode(packed.packets[0].view(), &message), wire::DecodeError::kNone);
  EXPECT_EQ(message.header.epoch, 123456u);
  EXPECT_EQ(message.header.flags, wire::kFlagRetransmission);
  EXPECT_EQ(message.header.type, wire::MessageType::kCollect);
  for (std::uint32_t j = 0; j < message.header.slot_count; ++j) {
    EXPECT_EQ(message.slots[j].value, 0u);  // COLLECT carries no values
  }
}

TEST(HotPackets, AnEmptyPushHasNoPackets) {
  const HotSet set = MakeHotSet();
  const PackedValues packed = PackHotValues(set, wire::Header{}, {}, {}, {});
  EXPECT_TRUE(packed.packets.empty());
}

TEST(HotPackets, BadPushesAreRefusedWithTheKeyNamed) {
  const HotSet set = MakeHotSet();
  const std::vector<hot::Key> cold = {1000, 42};
  const std::vector<float> two = {1, 2};
  EXPECT_THAT([&] { CheckHotValues(set, cold, two, {}); },
              ::testing::ThrowsMessage<std::invalid_argument>(::testing::HasSubstr("42")));
  // Key 1001 has 2 values.
  const std::vector<hot::Key> one = {1001};
  const std::vector<int> wrong_len = {1};
  EXPECT_THAT([&] { CheckHotValues(set, one, std::vector<float>{1}, wrong_len); },
              ::testing::ThrowsMessage<std::invalid_argument>(::testing::HasSubstr("1001")));
  EXPECT_THROW(CheckHotValues(set, one, std::vector<float>{1, 2, 3}, {}), std::invalid_argument);
  EXPECT_THROW(CheckHotValues(set, one, two, std::vector<int>{2, 2}), std::invalid_argument);
  const std::vector<std::uint32_t> first = CheckHotValues(set, one, two, std::vector<int>{2});
  EXPECT_EQ(first, std::vector<std::uint32_t>{0});
}

TEST(HotPackets, APushLookedUpByItsCallerIsCheckedAsOneLookedUpHere) {
  const HotSet set = MakeHotSet();
  const std::vector<hot::Key> keys = {1001, 1000};  // 2 values, then 1
  const std::vector<float> three = {1, 2, 3};
  std::vector<HotSet::Entry> entries;
  const std::vector<std::uint32_t> first = CheckHotValues(set, keys, three, {}, &entries);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].value_len, 2u);
  EXPECT_EQ(CheckHotValues(keys, entries, three, {}), first);
  EXPECT_EQ(first, (std::vector<std::uint32_t>{0, 2}));
  // A cold entry is named by its key; entries that do not match the keys
  // in number are refused.
  std::vector<HotSet::Entry> with_cold = entries;
  with_cold[1] = HotSet::Entry{};
  EXPECT_THAT([&] { CheckHotValues(keys, with_cold, three, {}); },
              ::testing::ThrowsMessage<std::invalid_argument>(::testing::HasSubstr("1000")));
  EXPECT_THROW(CheckHotValues(keys, std::span<const HotSet::Entry>(entries).first(1), three, {}),
               std::invalid_argument);
  EXPECT_THROW(CheckHotValues(keys, entries, std::vector<float>{1, 2}, {}), std::invalid_argument);
}

TEST(HotPackets, AnUpdateCarriesEveryValueOnceByRowInFullRowBlockPackets) {
  // 600 keys of 1-3 values over 8 arrays: several full UPDATE packets.
  std::vector<HotKey> hot_keys;
  for (std::uint32_t k = 0; k < 600; ++k) hot_keys.push_back({5000 + k, 1 + k % 3, 1000u - k});
  const HotSet set = hot::PlaceHotSet(hot_keys, hot::SwitchLayout{8, 512, 2}, hot::HeatPlacement());
  std::vector<hot::Key> keys;
  std::vector<float> vals;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> expected;  // cell -> bits
  for (std::uint32_t k = 0; k < 600; k += 2) {  // every other key changed
    keys.push_back(5000 + k);
    for (const CellAddress& cell : set.CellsOf(set.Find(keys.back()))) {
      vals.push_back(static_cast<float>(vals.size()) * 0.5f);
      expected[{cell.array, cell.index}] = std::bit_cast<std::uint32_t>(vals.back());
    }
  }
  wire::Header header;
  header.type = wire::MessageType::kUpdate;
  header.job_id = 3;
  header.node_id = 1;
  header.epoch = 9;
  const std::vector<EncodedPacket> packets =
      PackUpdate(set, header, keys, CheckHotValues(set, keys, vals, {}), vals);
  ASSERT_GT(packets.size(), 1u);

  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> seen;
  std::optional<std::pair<std::uint32_t, std::uint32_t>> previous;  // (row, array)
  for (std::size_t k = 0; k < packets.size(); ++k) {
    wire::Message message;
    ASSERT_EQ(wire::Decode(packets[k].view(), &message), wire::DecodeError::kNone);
    EXPECT_EQ(message.header.type, wire::MessageType::kUpdate);
    EXPECT_EQ(message.header.epoch, 9u);
    EXPECT_EQ(message.header.seq, k);
    // Every packet but the last is full: one more value (4 bytes, or 16
    // with a new row block) would not have fitted.
    if (k + 1 < packets.size()) {
      EXPECT_GT(packets[k].length + 16, wire::kMaxMessageBytes) << k;
    }
    for (std::size_t i = 0; i < message.header.slot_count; ++i) {
      const wire::CellValue& cell = message.cells[i];
      EXPECT_TRUE(seen.emplace(std::make_pair(cell.array, cell.index), cell.value).second);
      // By row, and by array within a row, across the packets.
      const std::pair<std::uint32_t, std::uint32_t> place{cell.index, cell.array};
      if (previous) {
        EXPECT_LT(*previous, place) << k;
      }
      previous = place;
    }
  }
  EXPECT_EQ(seen, expected);
  EXPECT_TRUE(PackUpdate(set, header, {}, {}, {}).empty());
  // With the keys' entries given, as the server's publish has them: the
  // same packets, byte for byte.
  std::vector<HotSet::Entry> entries;
  const auto first_value = CheckHotValues(set, keys, vals, {}, &entries);
  const std::vector<EncodedPacket> given =
      PackUpdate(set, header, keys, first_value, vals, entries);
  ASSERT_EQ(given.size(), packets.size());
  for (std::size_t k = 0; k < packets.size(); ++k) {
    EXPECT_TRUE(std::ranges::equal(given[k].view(), packets[k].view())) << k;
  }
  EXPECT_THROW(PackUpdate(set, header, keys, first_value, vals,
                          std::span<const HotSet::Entry>(entries).first(1)),
               std::invalid_argument);
}

// A sender queues its pushes without sorting; the queues are the sorted ones
// (cells of each array by row), for any push, and a key listed twice gives
// what the sort gives.
TEST(HotPackets, TheRowOrderQueuerQueuesAsTheSortDoes) {
  std::vector<HotKey> hot_keys;
  for (std::uint32_t k = 0; k < 400; ++k) hot_keys.push_back({5000 + 7 * k, 1 + k % 4, 1000u - k});
  const auto set = std::make_shared<const HotSet>(
      hot::PlaceHotSet(hot_keys, hot::SwitchLayout{8, 130, 2}, hot::HeatPlacement()));
  RowOrderQueuer queuer(set);
  std::mt19937 rng(11);
  for (int round = 0; round < 50; ++round) {
    std::vector<hot::Key> keys;
    std::vector<float> vals;
    for (const HotKey& key : hot_keys) {
      if (rng() % 3 != 0) continue;
      keys.push_back(key.key);
      vals.resize(vals.size() + key.value_len, 1.0f);
    }
    std::shuffle(keys.begin(), keys.end(), rng);
    std::vector<hot::HotSet::Entry> entries;
    const auto first_value = CheckHotValues(*set, keys, vals, {}, &entries);
    EXPECT_EQ(queuer.Queue(keys, entries, first_value), QueueHotCells(*set, keys, first_value))
        << round;
  }
  const std::vector<hot::Key> twice = {5000, 5007, 5000};
  const std::vector<float> vals(1 + 2 + 1, 1.0f);
  std::vector<hot::HotSet::Entry> entries;
  const auto first_value = CheckHotValues(*set, twice, vals, {}, &entries);
  EXPECT_EQ(queuer.Queue(twice, entries, first_value), QueueHotCells(*set, twice, first_value));
}

}  // namespace
}  // namespace libra::hotpath
