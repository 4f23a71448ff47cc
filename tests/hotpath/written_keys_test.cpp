#include "hotpath/messages/written_keys.h"

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <stdexcept>

#include "hot/hot_set.h"
#include "hot/placement.h"

namespace libra::hotpath {
namespace {

std::vector<std::uint32_t> Positions(std::span<const std::uint8_t> bitmap, std::uint32_t universe) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t k = 0; k < universe; ++k) {
    if (KeyBit(bitmap, k)) out.push_back(k);
  }
  return out;
}

TEST(WrittenKeysTest, ASparseSetIsWrittenAsGapsAndADenseOneAsABitmap) {
  const std::vector<std::uint32_t> sparse = {3, 4, 900};
  const std::vector<std::uint8_t> gaps = EncodeKeySet(sparse, 1000);
  EXPECT_EQ(gaps[0], kKeySetGaps);
  // 3, then 4 - 3 - 1 = 0, then 900 - 4 - 1 = 895 (two varint bytes).
  EXPECT_EQ(gaps, (std::vector<std::uint8_t>{kKeySetGaps, 3, 0, 0x7f | 0x80, 6}));

  std::vector<std::uint32_t> dense;
  for (std::uint32_t k = 0; k < 1000; k += 2) dense.push_back(k);
  const std::vector<std::uint8_t> bitmap = EncodeKeySet(dense, 1000);
  EXPECT_EQ(bitmap[0], kKeySetBitmap);
  EXPECT_EQ(bitmap.size(), 1 + KeyBitmapBytes(1000));

  for (const auto& [set, positions] : {std::pair{gaps, sparse}, std::pair{bitmap, dense}}) {
    std::vector<std::uint8_t> merged(KeyBitmapBytes(1000), 0);
    ASSERT_TRUE(MergeKeySet(set, 1000, merged));
    EXPECT_EQ(Positions(merged, 1000), positions);
  }
}

TEST(WrittenKeysTest, MergingIsAUnion) {
  std::vector<std::uint8_t> merged(KeyBitmapBytes(20), 0);
  ASSERT_TRUE(MergeKeySet(EncodeKeySet(std::vector<std::uint32_t>{1, 5}, 20), 20, merged));
  ASSERT_TRUE(MergeKeySet(EncodeKeySet(std::vector<std::uint32_t>{5, 19}, 20), 20, merged));
  ASSERT_TRUE(MergeKeySet(EncodeKeySet(std::vector<std::uint32_t>{}, 20), 20, merged));
  EXPECT_EQ(Positions(merged, 20), (std::vector<std::uint32_t>{1, 5, 19}));
}

TEST(WrittenKeysTest, RandomSetsRoundTrip) {
  std::mt19937 rng(3);
  for (int round = 0; round < 200; ++round) {
    const std::uint32_t universe = rng() % 3000;
    const double share = (rng() % 100) / 100.0;
    std::vector<std::uint32_t> positions;
    for (std::uint32_t k = 0; k < universe; ++k) {
      if ((rng() % 1000) < share * 1000) positions.push_back(k);
    }
    const std::vector<std::uint8_t> set = EncodeKeySet(positions, universe);
    EXPECT_LE(set.size(), 1 + KeyBitmapBytes(universe));
    std::vector<std::uint8_t> merged(KeyBitmapBytes(universe), 0);
    ASSERT_TRUE(MergeKeySet(set, universe, merged));
    EXPECT_EQ(Positions(merged, universe), positions);
  }
}

TEST(WrittenKeysTest, TheEncoderRefusesPositionsOutOfOrderOrRange) {
  EXPECT_THROW(EncodeKeySet(std::vector<std::uint32_t>{5, 5}, 10), std::invalid_argument);
  EXPECT_THROW(EncodeKeySet(std::vector<std::uint32_t>{6, 5}, 10), std::invalid_argument);
  EXPECT_THROW(EncodeKeySet(std::vector<std::uint32_t>{10}, 10), std::invalid_argument);
}

TEST(WrittenKeysTest, AMalformedSetChangesNothing) {
  const std::uint32_t universe = 12;
  const std::vector<std::vector<std::uint8_t>> bad = {
      {},                                 // no form byte
      {7, 1},                             // unknown form
      {kKeySetBitmap, 0xff},              // bitmap one byte short
      {kKeySetBitmap, 0xff, 0x10},        // bit 12: past the universe
      {kKeySetBitmap, 0xff, 0x0f, 0x00},  // bitmap one byte long
      {kKeySetGaps, 12},                  // position 12
      {kKeySetGaps, 2, 9},                // 2, then 12
      {kKeySetGaps, 3, 0x80},             // a varint cut short
  };
  for (const std::vector<std::uint8_t>& set : bad) {
    std::vector<std::uint8_t> merged = {0x01, 0x00};
    EXPECT_FALSE(MergeKeySet(set, universe, merged)) << set.size();
    EXPECT_EQ(merged, (std::vector<std::uint8_t>{0x01, 0x00}));
  }
  std::vector<std::uint8_t> wrong_bitmap(5, 0);
  EXPECT_FALSE(
      MergeKeySet(EncodeKeySet(std::vector<std::uint32_t>{1}, universe), universe, wrong_bitmap));
}

TEST(WrittenKeysTest, PositionsCountEachServersKeysInAscendingKeyOrder) {
  // Hot keys in placement order 30, 10, 20, 40; servers 1, 0, 1, 0.
  std::vector<hot::HotKey> keys;
  for (const hot::Key key : {30, 10, 20, 40}) keys.push_back(hot::HotKey{key, 1});
  const auto hot_set = std::make_shared<const hot::HotSet>(
      hot::PlaceHotSet(keys, hot::SwitchLayout{4, 4, 2}, hot::HeatPlacement()));
  std::vector<std::uint32_t> owners;
  for (const hot::HotKey& key : hot_set->keys())
    owners.push_back(key.key == 10 || key.key == 40 ? 0 : 1);
  std::vector<std::uint32_t> universe;
  const std::vector<std::uint32_t> positions = OwnedKeyPositions(*hot_set, owners, &universe);
  EXPECT_EQ(universe, (std::vector<std::uint32_t>{2, 2}));
  for (std::size_t i = 0; i < hot_set->size(); ++i) {
    const hot::Key key = hot_set->keys()[i].key;
    const std::uint32_t expected = (key == 10 || key == 20) ? 0 : 1;
    EXPECT_EQ(positions[i], expected) << "key " << key;
  }
  EXPECT_THROW(OwnedKeyPositions(*hot_set, std::vector<std::uint32_t>{0}, &universe),
               std::invalid_argument);
}

}  // namespace
}  // namespace libra::hotpath
