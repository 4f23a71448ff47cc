#include "hot/hot_set.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace libra::hot {
namespace {

TEST(ChooseHotKeys, TakesTheHeaviestKeysThatFitCountingEveryValue) {
  const std::vector<HotKey> candidates = {
      {1, 4, 100}, {2, 1, 90}, {3, 8, 80}, {4, 2, 70}, {5, 1, 60}, {6, 1, 1},
  };
  // 4 + 1 = 5 cells used; key 3 needs 8 of the 5 left so it is skipped,
  // then 4 (2 cells) and 5 (1 cell) fill 8 of 8, and key 6 finds no room.
  const std::vector<HotKey> chosen = ChooseHotKeys(candidates, 8);
  ASSERT_EQ(chosen.size(), 4u);
  EXPECT_EQ(chosen[0].key, 1u);
  EXPECT_EQ(chosen[1].key, 2u);
  EXPECT_EQ(chosen[2].key, 4u);
  EXPECT_EQ(chosen[3].key, 5u);
  uint64_t cells = 0;
  for (const HotKey& key : chosen) cells += key.value_len;
  EXPECT_LE(cells, 8u);
}

TEST(ChooseHotKeys, HonoursTheMinimumFrequencyAndOrdersTiesByKey) {
  const std::vector<HotKey> candidates = {{9, 1, 5}, {3, 1, 5}, {4, 1, 2}, {5, 1, 7}};
  const std::vector<HotKey> chosen = ChooseHotKeys(candidates, 100, 5);
  ASSERT_EQ(chosen.size(), 3u);
  EXPECT_EQ(chosen[0].key, 5u);
  EXPECT_EQ(chosen[1].key, 3u);
  EXPECT_EQ(chosen[2].key, 9u);
  EXPECT_TRUE(ChooseHotKeys(candidates, 0).empty());
}

TEST(ChooseHotKeys, ChoosesWhatTheGreedyFillOfTheFullRankingChooses) {
  // Ranking only the heaviest `capacity` keys first must not change the
  // choice, also when long keys are skipped and lighter ones beyond them
  // fill the cells left.
  std::mt19937_64 random(7);
  for (int round = 0; round < 200; ++round) {
    std::vector<HotKey> candidates;
    const int n = 1 + static_cast<int>(random() % 60);
    for (int i = 0; i < n; ++i) {
      candidates.push_back(
          {static_cast<Key>(n - i), 1 + static_cast<uint32_t>(random() % 5), random() % 12});
    }
    const uint64_t capacity = random() % 40;
    std::vector<HotKey> ranked = candidates;
    std::sort(ranked.begin(), ranked.end(), [](const HotKey& a, const HotKey& b) {
      return a.frequency != b.frequency ? a.frequency > b.frequency : a.key < b.key;
    });
    const std::vector<HotKey> expected = ChooseRankedHotKeys(ranked, capacity, 2);
    const std::vector<HotKey> chosen = ChooseHotKeys(candidates, capacity, 2);
    ASSERT_EQ(chosen.size(), expected.size()) << "round " << round;
    for (size_t i = 0; i < chosen.size(); ++i) {
      EXPECT_EQ(chosen[i].key, expected[i].key) << "round " << round << ", place " << i;
    }
  }
}

TEST(ChooseRankedHotKeys, KeepsTheGivenOrderAndStopsAtTheMinimumFrequency) {
  // Ranked by the caller: key 9 before key 4 although their frequencies tie.
  const std::vector<HotKey> ranked = {{9, 1, 7}, {4, 1, 7}, {5, 3, 6}, {6, 1, 6}, {8, 1, 2}};
  const std::vector<HotKey> chosen = ChooseRankedHotKeys(ranked, 4, 3);
  ASSERT_EQ(chosen.size(), 3u);
  EXPECT_EQ(chosen[0].key, 9u);
  EXPECT_EQ(chosen[1].key, 4u);
  EXPECT_EQ(chosen[2].key, 6u);  // key 5 needs 3 cells, only 2 are left
  EXPECT_EQ(ChooseRankedHotKeys(ranked, 100, 3).size(), 4u);  // key 8 is below 3
}

TEST(HotSet, LooksUpKeysAndCellsBothWays) {
  const SwitchLayout layout{4, 8, 2};
  const HotSet set(layout, PlacementKind::kHeat, {{10, 2, 50}, {20, 1, 40}},
                   {{0, 0}, {1, 0}, {2, 3}});
  EXPECT_EQ(set.size(), 2u);
  EXPECT_EQ(set.num_values(), 3u);
  EXPECT_EQ(set.Find(10), 0u);
  EXPECT_EQ(set.Find(20), 1u);
  EXPECT_EQ(set.Find(30), HotSet::kCold);
  EXPECT_FALSE(set.IsHot(30));
  // One lookup gives the index and the length, as keys() has them.
  EXPECT_EQ(set.Lookup(10).index, 0u);
  EXPECT_EQ(set.Lookup(10).value_len, 2u);
  EXPECT_EQ(set.Lookup(20).value_len, 1u);
  EXPECT_EQ(set.Lookup(30).index, HotSet::kCold);
  EXPECT_EQ(set.CellsOf(set.Lookup(10)).size(), 2u);
  EXPECT_EQ(set.CellsOf(set.Lookup(10))[1], (CellAddress{1, 0}));
  ASSERT_EQ(set.CellsOf(0).size(), 2u);
  EXPECT_EQ(set.CellsOf(0)[1], (CellAddress{1, 0}));
  EXPECT_EQ(set.CellsOf(1)[0], (CellAddress{2, 3}));
  const auto owner = set.OwnerOf({1, 0});
  ASSERT_TRUE(owner.has_value());
  EXPECT_EQ(owner->key_index, 0u);
  EXPECT_EQ(owner->offset, 1u);
  EXPECT_FALSE(set.OwnerOf({3, 3}).has_value());     // free
  EXPECT_FALSE(set.OwnerOf({9, 0}).has_value());     // no such array
  EXPECT_EQ(PhysicalIndex(layout, {2, 3}, 1), 11u);  // bank 1 follows bank 0
}

// The filter in front of the lookup table never turns a hot key away, and
// cold keys (random ones, neighbours of hot ones, the table's empty marker)
// are cold whether or not they pass it; LookupAll agrees with Lookup.
TEST(HotSet, FindsEveryHotKeyAndNoColdOne) {
  std::mt19937_64 rng(11);
  std::vector<HotKey> keys;
  std::vector<CellAddress> cells;
  const SwitchLayout layout{4, 8192, 2};
  for (uint32_t k = 0; k < 20000; ++k) {
    keys.push_back({rng() | 1, 1, 1});  // odd keys are hot
    cells.push_back({k % 4, k / 4});
  }
  keys.push_back({~Key{0}, 1, 1});  // the table's marker key, hot too
  cells.push_back({0, 5000});
  const HotSet set(layout, PlacementKind::kHeat, keys, cells);
  std::vector<Key> asked;
  for (uint32_t k = 0; k < keys.size(); ++k) {
    ASSERT_EQ(set.Find(keys[k].key), k);
    asked.push_back(keys[k].key);
    asked.push_back(keys[k].key - 1);  // even: cold
  }
  for (int i = 0; i < 100000; ++i) asked.push_back(rng() & ~Key{1});
  for (Key key = 0; key < 1000; key += 2) asked.push_back(key);
  const std::vector<HotSet::Entry> entries = set.LookupAll(asked);
  for (size_t i = 0; i < asked.size(); ++i) {
    const bool hot = (asked[i] & 1) != 0;
    ASSERT_EQ(entries[i].index != HotSet::kCold, hot) << asked[i];
    ASSERT_EQ(entries[i].index, set.Lookup(asked[i]).index);
  }
  // EntriesOf: a caller's entries as they are, else the lookups.
  std::vector<HotSet::Entry> storage;
  const std::vector<Key> two = {keys[0].key, 2};
  const std::vector<HotSet::Entry> given = {HotSet::Entry{7, 3}, HotSet::Entry{}};
  EXPECT_EQ(set.EntriesOf(two, given, &storage).data(), given.data());
  EXPECT_TRUE(storage.empty());
  const std::span<const HotSet::Entry> looked_up = set.EntriesOf(two, {}, &storage);
  ASSERT_EQ(looked_up.size(), 2u);
  EXPECT_EQ(looked_up[0].index, 0u);
  EXPECT_EQ(looked_up[1].index, HotSet::kCold);
  EXPECT_EQ(HotSet().Find(0), HotSet::kCold);  // an empty set has every key cold
  EXPECT_EQ(HotSet().Find(~Key{0}), HotSet::kCold);
}

TEST(HotSet, RejectsInconsistentPlacements) {
  const SwitchLayout layout{4, 8, 2};
  EXPECT_THROW(
      HotSet(layout, PlacementKind::kHeat, {{1, 2, 5}, {2, 1, 4}}, {{0, 0}, {1, 0}, {0, 0}}),
      std::invalid_argument);  // a cell used twice
  EXPECT_THROW(HotSet(layout, PlacementKind::kHeat, {{1, 1, 5}}, {{4, 0}}),
               std::invalid_argument);  // no such array
  EXPECT_THROW(HotSet(layout, PlacementKind::kHeat, {{1, 1, 5}}, {{0, 8}}),
               std::invalid_argument);  // past the array's end
  EXPECT_THROW(HotSet(layout, PlacementKind::kHeat, {{1, 2, 5}}, {{0, 0}}),
               std::invalid_argument);  // too few cells
  EXPECT_THROW(HotSet(layout, PlacementKind::kHeat, {{1, 1, 5}, {1, 1, 5}}, {{0, 0}, {0, 1}}),
               std::invalid_argument);  // a key twice
  EXPECT_THROW(HotSet(SwitchLayout{0, 8, 2}, PlacementKind::kHeat, {}, {}), std::invalid_argument);
}

TEST(PlacementKind, ParsesItsNames) {
  EXPECT_EQ(ParsePlacementKind("heat"), PlacementKind::kHeat);
  EXPECT_EQ(ParsePlacementKind(PlacementName(PlacementKind::kHash)), PlacementKind::kHash);
  EXPECT_THROW(ParsePlacementKind("round-robin"), std::invalid_argument);
}

}  // namespace
}  // namespace libra::hot
