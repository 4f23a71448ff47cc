// Replica bookkeeping: cells move forward only, the replica's epoch is the
// oldest cell's, and the cells still behind an epoch are named as its gap.
#include "hotpath/hot_replica.h"

#include <gtest/gtest.h>

#include <bit>

#include "libra/placement.h"

namespace libra::hotpath {
namespace {

using hot::HotSet;

HotSet MakeHotSet() {
  // Keys 1, 2, 3 with 1, 2, 1 values over 2 arrays.
  return hot::PlaceHotSet({{1, 1, 30}, {2, 2, 20}, {3, 1, 10}}, hot::SwitchLayout{2, 4, 2},
                          hot::HeatPlacement());
}

// The REPLICA slots that carry `vals` for `keys` (one packet per value, for
// simplicity: slot j = the value's array).
std::vector<std::vector<wire::Slot>> SlotsFor(const HotSet& set, std::vector<hot::Key> keys,
                                              std::vector<float> vals) {
  std::vector<std::vector<wire::Slot>> packets;
  std::size_t position = 0;
  for (const hot::Key key : keys) {
    for (const hot::CellAddress& cell : set.CellsOf(set.Find(key))) {
      std::vector<wire::Slot> slots(cell.array + 1);
      slots[cell.array] = {true, false, cell.index, std::bit_cast<std::uint32_t>(vals[position++])};
      packets.push_back(slots);
    }
  }
  return packets;
}

TEST(HotReplica, ReachesAnEpochOnlyWhenEveryCellHasIt) {
  const HotSet set = MakeHotSet();
  HotReplica replica(set);
  EXPECT_EQ(replica.MinEpoch(), std::nullopt);
  EXPECT_EQ(replica.MaxEpoch(), std::nullopt);
  EXPECT_FALSE(replica.Reached(std::vector<hot::Key>{1}, std::nullopt));

  auto packets = SlotsFor(set, {1, 2, 3}, {0.5f, 1.5f, 2.5f, 3.5f});
  for (std::size_t i = 0; i + 1 < packets.size(); ++i) {
    EXPECT_EQ(replica.Apply(4, packets[i]).advanced, 1u);
  }
  EXPECT_EQ(replica.MinEpoch(), std::nullopt);  // key 3 has no value yet
  EXPECT_EQ(replica.MaxEpoch(), 4u);
  EXPECT_TRUE(replica.Reached(std::vector<hot::Key>{1, 2}, 4u));
  EXPECT_FALSE(replica.Reached(std::vector<hot::Key>{3}, std::nullopt));
  EXPECT_EQ(replica.MissingKeys(4), std::vector<hot::Key>{3});

  replica.Apply(4, packets.back());
  EXPECT_EQ(replica.MinEpoch(), 4u);
  std::vector<float> vals;
  std::vector<int> lens;
  replica.Read(std::vector<hot::Key>{3, 2}, &vals, &lens);
  EXPECT_EQ(vals, (std::vector<float>{3.5f, 1.5f, 2.5f}));
  EXPECT_EQ(lens, (std::vector<int>{1, 2}));
}

TEST(HotReplica, OlderAndRepeatedValuesAreStale) {
  const HotSet set = MakeHotSet();
  HotReplica replica(set);
  const std::vector<hot::Key> all = {1, 2, 3};
  replica.ApplyKeys(6, all, std::vector<float>{1, 2, 3, 4});
  auto older = SlotsFor(set, {2}, {-1.0f, -2.0f});
  const HotReplica::ApplyResult result = replica.Apply(5, older[0]);
  EXPECT_EQ(result.advanced, 0u);
  EXPECT_EQ(result.stale, 1u);
  EXPECT_EQ(replica.Apply(6, older[1]).stale, 1u);  // same epoch again: already there

  // One cell of key 2 moves to epoch 7; the replica stays at 6 and key 2 is
  // not yet at 7 until its other cell follows.
  EXPECT_EQ(replica.Apply(7, older[0]).advanced, 1u);
  EXPECT_EQ(replica.MinEpoch(), 6u);
  EXPECT_EQ(replica.MaxEpoch(), 7u);
  EXPECT_FALSE(replica.Reached(std::vector<hot::Key>{2}, 7u));
  EXPECT_EQ(replica.MissingKeys(7), (std::vector<hot::Key>{1, 2, 3}));
  replica.ApplyKeys(7, std::vector<hot::Key>{1, 3}, std::vector<float>{9, 9});
  EXPECT_EQ(replica.MissingKeys(7), std::vector<hot::Key>{2});
  std::vector<float> vals;
  replica.Read(std::vector<hot::Key>{2}, &vals, nullptr);
  EXPECT_EQ(vals, (std::vector<float>{-1.0f, 3.0f}));
}

TEST(HotReplica, SlotsOfFreeCellsAreCountedNotStored) {
  const HotSet set = MakeHotSet();
  HotReplica replica(set);
  std::vector<wire::Slot> slots(2);
  // Four values occupy 4 of the 8 cells; index 3 of both arrays is free.
  slots[0] = {true, false, 3, 0};
  slots[1] = {true, false, 3, 0};
  EXPECT_EQ(replica.Apply(1, slots).unknown, 2u);
  std::vector<wire::Slot> too_wide(3);
  too_wide[2] = {true, false, 0, 0};  // there is no array 2
  EXPECT_EQ(replica.Apply(1, too_wide).unknown, 1u);
  EXPECT_EQ(replica.MaxEpoch(), std::nullopt);
  EXPECT_THROW(replica.ApplyKeys(1, std::vector<hot::Key>{99}, std::vector<float>{1}),
               std::invalid_argument);
  EXPECT_THROW(replica.ApplyKeys(1, std::vector<hot::Key>{2}, std::vector<float>{1}),
               std::invalid_argument);
}

}  // namespace
}  // namespace libra::hotpath
