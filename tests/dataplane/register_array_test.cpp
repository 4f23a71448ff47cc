#include "dataplane/register_array.h"

#include <gtest/gtest.h>

#include <random>

#include "dataplane/register_array_group.h"
#include "dataplane/stateful_ops.h"

namespace libra::dataplane {
namespace {

struct AccumulateOutput {
  CellAction action;
  bool saturated;  // the cell is flagged after the update
};
AccumulateOutput Accumulate(RegisterPair& cell, std::uint32_t epoch, std::int32_t addend,
                            bool mark_saturated) {
  const CellAction action = AccumulateValue{EpochTag(epoch), addend, mark_saturated}(cell);
  return {action, IsSaturated(cell)};
}
ReadInEpoch::Output Read(RegisterPair& cell, std::uint32_t epoch) {
  return ReadInEpoch{EpochTag(epoch)}(cell);
}

TEST(RegisterArrayTest, AllowsOneAccessPerPacketPass) {
  RegisterArray<std::uint32_t> array("a", 8);
  array.Write(1, 3, 5);
  EXPECT_THROW(array.Read(1, 4), RegisterAccessError);
  EXPECT_EQ(array.Read(2, 3), 5u);
  EXPECT_THROW(array.Add(2, 3, 1), RegisterAccessError);
  EXPECT_EQ(array.Add(3, 3, 2), 7u);
}

TEST(RegisterArrayTest, PairProgramsCountAsAnAccess) {
  RegisterArray<RegisterPair> array("pairs", 4);
  array.Execute(1, 0, CountInEpoch{EpochTag(0)});
  EXPECT_THROW(array.Execute(1, 1, CountInEpoch{EpochTag(0)}), RegisterAccessError);
}

TEST(RegisterArrayTest, RejectsIndexOutOfRange) {
  RegisterArray<std::uint32_t> array("a", 2);
  EXPECT_THROW(array.Read(1, 2), RegisterAccessError);
}

TEST(RegisterArrayTest, SaturatingAddClampsAndReports) {
  RegisterArray<std::uint32_t> array("a", 1);
  array.Write(1, 0, static_cast<std::uint32_t>(INT32_MAX - 1));
  const SaturatingSum sum = array.SaturatingAdd(2, 0, 5);
  EXPECT_TRUE(sum.saturated);
  EXPECT_EQ(sum.value, INT32_MAX);
  const SaturatingSum down = array.SaturatingAdd(3, 0, -3);
  EXPECT_FALSE(down.saturated);
  EXPECT_EQ(down.value, INT32_MAX - 3);
  array.Write(4, 0, static_cast<std::uint32_t>(INT32_MIN + 1));
  EXPECT_EQ(array.SaturatingAdd(5, 0, -2).value, INT32_MIN);
}

TEST(RegisterArrayGroupTest, OneAccessPerArrayPerPassOverTheWholeGroup) {
  RegisterArrayGroup group("value_", 4, 8);
  const std::uint32_t index[4] = {1, 2, 3, 4};
  int visits = 0;
  auto count = [&](std::size_t, RegisterPair&) { ++visits; };
  group.AccessEach(1, 0b0101, index, 0, count);  // arrays 0 and 2
  EXPECT_EQ(visits, 2);
  group.AccessEach(1, 0b0010, index, 0, count);  // array 1: not touched yet
  EXPECT_THROW(group.AccessEach(1, 0b1100, index, 0, count), RegisterAccessError);  // 2 again
  EXPECT_EQ(visits, 3);  // refused before any cell was touched
  EXPECT_THROW(group.Execute(1, 0, 0, ReadInEpoch{EpochTag(0)}), RegisterAccessError);
  group.Execute(1, 3, 0, ReadInEpoch{EpochTag(0)});  // array 3 is still free
  group.AccessEach(2, 0b1111, index, 0, count);      // a new pass may touch them all
  EXPECT_EQ(visits, 7);
}

TEST(RegisterArrayGroupTest, ARowAccessClaimsItsArraysAndSeesNeighbouringCells) {
  RegisterArrayGroup group("value_", 3, 8);
  group.AccessRow(1, 0b011, 5, [](RegisterPair* row) {
    row[0].lo = 10;
    row[1].lo = 11;
  });
  EXPECT_EQ(group.Peek(0, 5).lo, 10u);
  EXPECT_EQ(group.Peek(1, 5).lo, 11u);
  EXPECT_EQ(group.Peek(2, 5).lo, 0u);
  const std::uint32_t index[3] = {5, 5, 5};
  auto nothing = [](std::size_t, RegisterPair&) {};
  EXPECT_THROW(group.AccessEach(1, 0b010, index, 0, nothing), RegisterAccessError);  // 1 again
  group.AccessEach(1, 0b100, index, 0, nothing);                                     // 2 is free
  EXPECT_THROW(group.AccessRow(2, 0b1000, 0, [](RegisterPair*) {}), RegisterAccessError);
  EXPECT_THROW(group.AccessRow(3, 0b001, 8, [](RegisterPair*) {}), RegisterAccessError);
}

TEST(RegisterArrayGroupTest, RejectsIndicesAndArraysOutOfRange) {
  RegisterArrayGroup group("value_", 3, 8);
  const std::uint32_t index[4] = {0, 5, 3, 0};
  auto nothing = [](std::size_t, RegisterPair&) {};
  EXPECT_THROW(group.AccessEach(1, 0b010, index, 4, nothing), RegisterAccessError);   // 4 + 5
  EXPECT_THROW(group.AccessEach(2, 0b1000, index, 0, nothing), RegisterAccessError);  // array 3
  EXPECT_THROW(group.Execute(3, 3, 0, ReadInEpoch{EpochTag(0)}), RegisterAccessError);
  EXPECT_THROW(group.Execute(4, 64, 0, ReadInEpoch{EpochTag(0)}), RegisterAccessError);
  EXPECT_THROW(group.Execute(5, 0, 8, ReadInEpoch{EpochTag(0)}), RegisterAccessError);
  EXPECT_THROW(RegisterArrayGroup().Execute(6, 0, 0, ReadInEpoch{EpochTag(0)}),
               RegisterAccessError);
}

TEST(RegisterArrayGroupTest, ArraysAreSeparateAndOffsetSelectsTheBank) {
  RegisterArrayGroup group("value_", 2, 8);
  const std::uint32_t index[2] = {3, 3};
  group.AccessEach(1, 0b01, index, 4, [](std::size_t j, RegisterPair& cell) {
    cell = {EpochTag(0), static_cast<std::uint32_t>(10 + j)};
  });
  EXPECT_EQ(group.Peek(0, 7).lo, 10u);
  EXPECT_EQ(group.Peek(0, 3).lo, 0u);
  EXPECT_EQ(group.Peek(1, 7).lo, 0u);
  EXPECT_EQ(group.Execute(2, 0, 7, ReadInEpoch{EpochTag(0)}).lo, 10u);
}

TEST(StatefulOpsTest, EpochCellAddsInSameEpochReplacesWhenNewerKeepsWhenOlder) {
  RegisterPair cell;
  EXPECT_EQ(Accumulate(cell, 4, 10, false).action, CellAction::kReplace);
  EXPECT_EQ(Accumulate(cell, 4, 5, false).action, CellAction::kAdd);
  EXPECT_EQ(static_cast<std::int32_t>(cell.lo), 15);
  EXPECT_EQ(Accumulate(cell, 2, 7, false).action, CellAction::kKeep);
  EXPECT_EQ(static_cast<std::int32_t>(cell.lo), 15);
  EXPECT_EQ(Accumulate(cell, 6, -1, false).action, CellAction::kReplace);
  EXPECT_EQ(static_cast<std::int32_t>(cell.lo), -1);
}

TEST(StatefulOpsTest, SaturationFlagIsStickyWithinTheEpochOnly) {
  RegisterPair cell;
  Accumulate(cell, 0, INT32_MAX, false);
  EXPECT_TRUE(Accumulate(cell, 0, 1, false).saturated);
  // Coming back into range does not clear the flag: the sum is already wrong.
  EXPECT_TRUE(Accumulate(cell, 0, -100, false).saturated);
  EXPECT_TRUE(Read(cell, 0).saturated);
  EXPECT_FALSE(Accumulate(cell, 2, 1, false).saturated);
  EXPECT_TRUE(Accumulate(cell, 2, 0, true).saturated);
}

TEST(StatefulOpsTest, TheBranchFreeCleanValueProgramIsTheTableProgram) {
  // Cells and addends chosen to hit every row of the table and both
  // saturation limits: tags around the packet's, sums near INT32_MIN/MAX.
  const std::int32_t edges[] = {0, 1, -1, 7, INT32_MAX, INT32_MIN, INT32_MAX - 3, INT32_MIN + 3};
  std::mt19937 rng(5);
  auto pick = [&](auto& values) { return values[rng() % std::size(values)]; };
  for (int trial = 0; trial < 200000; ++trial) {
    const std::uint32_t tag = EpochTag(3 + rng() % 3);
    const std::uint32_t stored_tag = rng() % 8;  // older, same and newer than tag
    RegisterPair cell{stored_tag | (rng() % 2 == 0 ? kSaturatedTagBit : 0u),
                      static_cast<std::uint32_t>(rng() % 2 ? pick(edges) : std::int32_t(rng()))};
    const std::int32_t addend = rng() % 2 ? pick(edges) : std::int32_t(rng());
    RegisterPair by_table = cell;
    const CellAction action = AccumulateValue{tag, addend, false}(by_table);
    RegisterPair by_selects = cell;
    const bool updated = AccumulateCleanValue(tag, addend, by_selects);
    ASSERT_EQ(updated, action != CellAction::kKeep) << trial;
    ASSERT_EQ(by_selects.hi, by_table.hi) << trial;
    ASSERT_EQ(by_selects.lo, by_table.lo) << trial;
  }
}

TEST(StatefulOpsTest, ReadInEpochSeesOlderCellsAsZero) {
  RegisterPair cell;
  Accumulate(cell, 3, 42, false);
  EXPECT_EQ(Read(cell, 3).lo, 42u);
  EXPECT_EQ(Read(cell, 5).lo, 0u);
  EXPECT_FALSE(Read(cell, 5).newer_epoch_stored);
  EXPECT_TRUE(Read(cell, 1).newer_epoch_stored);
}

TEST(StatefulOpsTest, RecordSeqFindsDuplicatesInTheWindow) {
  RegisterPair cell;
  EXPECT_EQ((RecordSeq{EpochTag(0), 0}(cell)), SeqVerdict::kNew);
  EXPECT_EQ((RecordSeq{EpochTag(0), 0}(cell)), SeqVerdict::kDuplicate);
  EXPECT_EQ((RecordSeq{EpochTag(0), 64}(cell)), SeqVerdict::kNew);
  EXPECT_EQ((RecordSeq{EpochTag(0), 0}(cell)), SeqVerdict::kDuplicate);  // late copy
  EXPECT_EQ((RecordSeq{EpochTag(1), 0}(cell)), SeqVerdict::kNew);
  EXPECT_EQ((RecordSeq{EpochTag(0), 128}(cell)), SeqVerdict::kDuplicate);  // older epoch
}

}  // namespace
}  // namespace libra::dataplane
