#include "hot/hot_key_table.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

namespace libra::hot {
namespace {

TEST(HotKeyTable, AgreesWithStdMapUnderInsertAndErase) {
  HotKeyTable<uint64_t> table;
  std::map<Key, uint64_t> reference;
  std::mt19937_64 random(7);
  for (int step = 0; step < 200000; ++step) {
    // A small key range forces long probe chains and many erasures inside them.
    const Key key = random() % 5000 + (step % 3 == 0 ? ~Key{0} - 2 : 0);
    if (random() % 4 == 0) {
      table.Erase(key);
      reference.erase(key);
    } else {
      table.FindOrInsert(key) += 1;
      reference[key] += 1;
    }
  }
  ASSERT_EQ(table.size(), reference.size());
  for (const auto& [key, value] : reference) {
    const uint64_t* found = table.Find(key);
    ASSERT_NE(found, nullptr) << key;
    EXPECT_EQ(*found, value);
  }
  size_t visited = 0;
  table.ForEach([&](Key key, uint64_t value) {
    ++visited;
    EXPECT_EQ(reference.at(key), value);
  });
  EXPECT_EQ(visited, reference.size());
}

TEST(HotKeyTable, HoldsTheEmptyMarkerKeyLikeAnyOther) {
  HotKeyTable<int> table;
  const Key marker = ~Key{0};
  EXPECT_EQ(table.Find(marker), nullptr);
  table.FindOrInsert(marker, 5);
  table.FindOrInsert(0, 6);
  EXPECT_EQ(*table.Find(marker), 5);
  EXPECT_EQ(*table.Find(0), 6);
  EXPECT_EQ(table.size(), 2u);
  table.Erase(marker);
  EXPECT_EQ(table.Find(marker), nullptr);
  EXPECT_EQ(table.size(), 1u);
  table.Clear();
  EXPECT_TRUE(table.empty());
}

}  // namespace
}  // namespace libra::hot
