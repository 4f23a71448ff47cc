#include "train/key_index.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <unordered_map>
#include <vector>

namespace libra::train {
namespace {

// Checks `index` against a std::unordered_map fed the same keys.
void ExpectSameAsAMap(const std::vector<uint64_t>& keys) {
  KeyIndex index;
  std::unordered_map<uint64_t, uint32_t> reference;
  for (uint64_t key : keys) {
    bool added = false;
    const uint32_t entry = index.FindOrAdd(key, &added);
    auto [it, inserted] = reference.try_emplace(key, static_cast<uint32_t>(reference.size()));
    ASSERT_EQ(added, inserted) << "key " << key;
    ASSERT_EQ(entry, it->second) << "key " << key;
  }
  EXPECT_EQ(index.size(), reference.size());
  for (const auto& [key, entry] : reference) {  // every key still found after all the growth
    EXPECT_EQ(index.Find(key), entry);
    bool added = true;
    EXPECT_EQ(index.FindOrAdd(key, &added), entry);
    EXPECT_FALSE(added);
  }
  // Find never adds: keys not fed are absent, and stay so.
  for (uint64_t key : {uint64_t{7}, uint64_t{0}, UINT64_MAX}) {
    if (reference.count(key)) continue;
    EXPECT_EQ(index.Find(key), KeyIndex::kAbsent) << "key " << key;
  }
  EXPECT_EQ(index.size(), reference.size());
}

TEST(KeyIndexTest, RandomKeysWithRepeatsMatchAHashMap) {
  std::mt19937_64 random(3);
  std::vector<uint64_t> keys;
  for (int i = 0; i < 200000; ++i) keys.push_back(random() % 50000 == 0 ? 42 : random());
  for (int i = 0; i < 100000; ++i) keys.push_back(keys[random() % keys.size()]);
  ExpectSameAsAMap(keys);
}

TEST(KeyIndexTest, SequentialAndExtremeKeys) {
  std::vector<uint64_t> keys = {0, UINT64_MAX, 1, UINT64_MAX - 1, 0};
  for (uint64_t k = 0; k < 100000; ++k) keys.push_back(k);
  for (uint64_t k = 0; k < 100000; ++k) keys.push_back(k << 32);  // low bits all zero
  ExpectSameAsAMap(keys);
}

TEST(KeyIndexTest, ClearAndReserve) {
  KeyIndex index;
  bool added = false;
  EXPECT_EQ(index.FindOrAdd(9, &added), 0u);
  EXPECT_EQ(index.FindOrAdd(8, &added), 1u);
  index.Clear();
  EXPECT_EQ(index.size(), 0u);
  index.Reserve(1000);
  EXPECT_EQ(index.FindOrAdd(8, &added), 0u);
  EXPECT_TRUE(added);
  for (uint64_t k = 100; k < 1100; ++k) index.FindOrAdd(k, &added);
  EXPECT_EQ(index.size(), 1001u);
  EXPECT_EQ(index.FindOrAdd(8, &added), 0u);
  EXPECT_FALSE(added);
}

}  // namespace
}  // namespace libra::train
