// Replica bookkeeping: a server's keys reach an epoch when its UPDATE stream
// of every epoch up to it is complete (LAST tells the length), values move
// forward only, and a server that lost packets is the gap until a repair
// brings all of its keys.
#include "hotpath/worker/hot_replica.h"

#include <gtest/gtest.h>

#include <bit>

#include "hot/placement.h"

namespace libra::hotpath {
namespace {

using hot::HotSet;

HotSet MakeHotSet() {
  // Keys 1, 2, 3 with 1, 2, 1 values over 2 arrays.
  return hot::PlaceHotSet({{1, 1, 30}, {2, 2, 20}, {3, 1, 10}}, hot::SwitchLayout{2, 4, 2},
                          hot::HeatPlacement());
}
// Keys 1 and 2 are server 0's, key 3 server 1's.
const std::vector<std::uint16_t> kOwners = {0, 0, 1};

// The REPLICA values that carry `vals` for `keys` (one packet per value, for
// simplicity).
std::vector<std::vector<wire::CellValue>> ValuesFor(const HotSet& set, std::vector<hot::Key> keys,
                                                    std::vector<float> vals) {
  std::vector<std::vector<wire::CellValue>> packets;
  std::size_t position = 0;
  for (const hot::Key key : keys) {
    for (const hot::CellAddress& cell : set.CellsOf(set.Find(key))) {
      packets.push_back({{cell.array, cell.index, std::bit_cast<std::uint32_t>(vals[position++])}});
    }
  }
  return packets;
}

wire::Header Replica(std::uint16_t server, std::uint32_t epoch, std::uint32_t seq,
                     bool last = false) {
  wire::Header header;
  header.type = wire::MessageType::kReplica;
  header.node_id = server;
  header.epoch = epoch;
  header.seq = seq;
  header.flags = last ? wire::kFlagLast : 0;
  return header;
}

// Applies packets as one stream of (server, epoch), the last one flagged LAST.
void ApplyStream(HotReplica& replica, std::uint16_t server, std::uint32_t epoch,
                 const std::vector<std::vector<wire::CellValue>>& packets) {
  if (packets.empty()) {
    replica.Apply(Replica(server, epoch, 0, true), {});
    return;
  }
  for (std::uint32_t i = 0; i < packets.size(); ++i) {
    replica.Apply(Replica(server, epoch, i, i + 1 == packets.size()), packets[i]);
  }
}

TEST(HotReplica, AServerReachesAnEpochWhenItsStreamIsComplete) {
  const HotSet set = MakeHotSet();
  HotReplica replica(set, kOwners, 4);
  EXPECT_EQ(replica.MinEpoch(), std::nullopt);
  EXPECT_EQ(replica.MaxEpoch(), std::nullopt);
  EXPECT_FALSE(replica.Reached(std::vector<hot::Key>{1}, std::nullopt));

  // Epoch 4 is the first: every value of server 0 (3 packets), LAST last.
  auto packets = ValuesFor(set, {1, 2}, {0.5f, 1.5f, 2.5f});
  EXPECT_EQ(replica.Apply(Replica(0, 4, 0), packets[0]).advanced, 1u);
  EXPECT_EQ(replica.Apply(Replica(0, 4, 2, true), packets[2]).epochs_completed, 0u);
  EXPECT_EQ(replica.MaxEpoch(), 4u);
  EXPECT_FALSE(replica.Reached(std::vector<hot::Key>{2}, 4u));  // seq 1 still missing
  EXPECT_TRUE(replica.Reached(std::vector<hot::Key>{1}, 4u));   // its cells hold epoch 4
  EXPECT_EQ(replica.MissingKeys(4), (std::vector<hot::Key>{1, 2, 3}));
  EXPECT_EQ(replica.Apply(Replica(0, 4, 1), packets[1]).epochs_completed, 1u);
  EXPECT_TRUE(replica.Reached(std::vector<hot::Key>{1, 2}, 4u));
  EXPECT_EQ(replica.MinEpoch(), std::nullopt);  // server 1 has published nothing yet
  EXPECT_EQ(replica.MissingKeys(4), std::vector<hot::Key>{3});

  ApplyStream(replica, 1, 4, ValuesFor(set, {3}, {3.5f}));
  EXPECT_EQ(replica.MinEpoch(), 4u);
  std::vector<float> vals;
  std::vector<int> lens;
  replica.Read(std::vector<hot::Key>{3, 2}, &vals, &lens);
  EXPECT_EQ(vals, (std::vector<float>{3.5f, 1.5f, 2.5f}));
  EXPECT_EQ(lens, (std::vector<int>{1, 2}));
  // The same by the keys' hot-set entries, as a pull that looked them up reads.
  const std::vector<HotSet::Entry> entries = set.LookupAll(std::vector<hot::Key>{3, 2});
  EXPECT_TRUE(replica.Reached(entries, 4u));
  EXPECT_FALSE(replica.Reached(entries, 5u));
  vals.clear();
  lens.clear();
  replica.Read(entries, &vals, &lens);
  EXPECT_EQ(vals, (std::vector<float>{3.5f, 1.5f, 2.5f}));
  EXPECT_EQ(lens, (std::vector<int>{1, 2}));
}

TEST(HotReplica, ASparseEpochLeavesUntouchedKeysCurrent) {
  const HotSet set = MakeHotSet();
  HotReplica replica(set, kOwners, 0);
  ApplyStream(replica, 0, 0, ValuesFor(set, {1, 2}, {1, 2, 3}));
  ApplyStream(replica, 1, 0, ValuesFor(set, {3}, {4}));
  // Epoch 1: server 0 changed key 1 only, server 1 nothing (one empty LAST).
  ApplyStream(replica, 0, 1, ValuesFor(set, {1}, {10}));
  EXPECT_EQ(replica.MinEpoch(), 0u);
  EXPECT_FALSE(replica.Reached(std::vector<hot::Key>{3}, 1u));
  ApplyStream(replica, 1, 1, {});
  EXPECT_EQ(replica.MinEpoch(), 1u);
  EXPECT_TRUE(replica.Reached(std::vector<hot::Key>{1, 2, 3}, 1u));
  std::vector<float> vals;
  replica.Read(std::vector<hot::Key>{1, 2, 3}, &vals, nullptr);
  EXPECT_EQ(vals, (std::vector<float>{10, 2, 3, 4}));
}

TEST(HotReplica, StreamsCompleteInEpochOrderWhateverOrderTheyArriveIn) {
  const HotSet set = MakeHotSet();
  HotReplica replica(set, std::vector<std::uint16_t>{}, 0);  // server 0 owns all
  ApplyStream(replica, 0, 0, ValuesFor(set, {1, 2, 3}, {1, 2, 3, 4}));
  // Epoch 2 complete before epoch 1 (whose LAST came before its seq 0).
  auto one = ValuesFor(set, {2}, {20, 30});
  ApplyStream(replica, 0, 2, ValuesFor(set, {2}, {200, 300}));
  replica.Apply(Replica(0, 1, 1, true), one[1]);
  EXPECT_EQ(replica.MinEpoch(), 0u);
  EXPECT_EQ(replica.MaxEpoch(), 2u);
  EXPECT_EQ(replica.Apply(Replica(0, 1, 0), one[0]).epochs_completed, 2u);
  EXPECT_EQ(replica.MinEpoch(), 2u);
  // Epoch 1's values came after epoch 2's: the cells keep epoch 2's.
  std::vector<float> vals;
  replica.Read(std::vector<hot::Key>{2}, &vals, nullptr);
  EXPECT_EQ(vals, (std::vector<float>{200, 300}));
}

TEST(HotReplica, ARepairOfAllAServersKeysCompletesIt) {
  const HotSet set = MakeHotSet();
  HotReplica replica(set, kOwners, 0);
  ApplyStream(replica, 0, 0, ValuesFor(set, {1, 2}, {1, 2, 3}));
  ApplyStream(replica, 1, 0, ValuesFor(set, {3}, {4}));
  // Epoch 1 of server 0 lost its seq 0; epoch 2 arrived whole.
  auto lost = ValuesFor(set, {1, 2}, {5, 6, 7});
  replica.Apply(Replica(0, 1, 1), lost[1]);
  replica.Apply(Replica(0, 1, 2, true), lost[2]);
  ApplyStream(replica, 0, 2, ValuesFor(set, {1}, {50}));
  ApplyStream(replica, 1, 1, {});
  ApplyStream(replica, 1, 2, {});
  EXPECT_EQ(replica.MinEpoch(), 0u);
  EXPECT_EQ(replica.MissingKeys(1), (std::vector<hot::Key>{1, 2}));
  // Some of the keys: they are current, the server is not.
  replica.ApplyKeys(1, std::vector<hot::Key>{2}, std::vector<float>{6, 7});
  EXPECT_TRUE(replica.Reached(std::vector<hot::Key>{2}, 1u));
  EXPECT_EQ(replica.MinEpoch(), 0u);
  // A key named twice does not stand in for the one missing.
  replica.ApplyKeys(1, std::vector<hot::Key>{2, 2}, std::vector<float>{6, 7, 6, 7});
  EXPECT_EQ(replica.MinEpoch(), 0u);
  // All of them: epoch 1 is complete, and so is epoch 2, which waited for it.
  const HotReplica::ApplyResult repaired =
      replica.ApplyKeys(1, std::vector<hot::Key>{1, 2}, std::vector<float>{5, 6, 7});
  EXPECT_EQ(repaired.epochs_completed, 2u);
  EXPECT_EQ(replica.MinEpoch(), 2u);
  std::vector<float> vals;
  replica.Read(std::vector<hot::Key>{1, 2}, &vals, nullptr);
  EXPECT_EQ(vals, (std::vector<float>{50, 6, 7}));  // key 1 keeps epoch 2's value
}

TEST(HotReplica, PacketsNoStreamCanHoldAreRejectedWithoutTouchingValues) {
  const HotSet set = MakeHotSet();
  HotReplica replica(set, kOwners, 0);
  const auto packets = ValuesFor(set, {1}, {9});
  EXPECT_TRUE(replica.Apply(Replica(2, 0, 0, true), packets[0]).rejected);   // no server 2
  EXPECT_TRUE(replica.Apply(Replica(0, 40, 0, true), packets[0]).rejected);  // far ahead
  EXPECT_TRUE(replica.Apply(Replica(0, 0, 1000), packets[0]).rejected);      // longer than any
  EXPECT_EQ(replica.MaxEpoch(), std::nullopt);
  EXPECT_FALSE(replica.Reached(std::vector<hot::Key>{1}, std::nullopt));

  replica.Apply(Replica(0, 0, 1, true), packets[0]);
  EXPECT_TRUE(replica.Apply(Replica(0, 0, 2, true), packets[0]).rejected);  // a second LAST
  EXPECT_TRUE(replica.Apply(Replica(0, 0, 3), packets[0]).rejected);        // past the LAST
  // A key of server 1 in a packet of server 0 is not taken.
  EXPECT_EQ(replica.Apply(Replica(0, 0, 0), ValuesFor(set, {3}, {1})[0]).unknown, 1u);
  EXPECT_FALSE(replica.Reached(std::vector<hot::Key>{3}, std::nullopt));
}

TEST(HotReplica, OlderAndRepeatedValuesAreStale) {
  const HotSet set = MakeHotSet();
  HotReplica replica(set, std::vector<std::uint16_t>{}, 5);
  replica.ApplyKeys(6, std::vector<hot::Key>{1, 2, 3}, std::vector<float>{1, 2, 3, 4});
  EXPECT_EQ(replica.MinEpoch(), 6u);
  auto older = ValuesFor(set, {2}, {-1.0f, -2.0f});
  EXPECT_EQ(replica.Apply(Replica(0, 5, 0), older[0]).stale, 1u);
  EXPECT_EQ(replica.Apply(Replica(0, 6, 0), older[1]).stale, 1u);
  EXPECT_EQ(replica.Apply(Replica(0, 7, 0), older[0]).advanced, 1u);
  std::vector<float> vals;
  replica.Read(std::vector<hot::Key>{2}, &vals, nullptr);
  EXPECT_EQ(vals, (std::vector<float>{-1.0f, 3.0f}));
}

TEST(HotReplica, ValuesOfFreeCellsAreCountedNotStored) {
  const HotSet set = MakeHotSet();
  HotReplica replica(set);
  // Four values occupy 4 of the 8 cells; index 3 of both arrays is free.
  const std::vector<wire::CellValue> free_cells = {{0, 3, 0}, {1, 3, 0}};
  EXPECT_EQ(replica.Apply(Replica(0, 1, 0), free_cells).unknown, 2u);
  const std::vector<wire::CellValue> too_wide = {{2, 0, 0}};  // there is no array 2
  EXPECT_EQ(replica.Apply(Replica(0, 1, 1), too_wide).unknown, 1u);
  const std::vector<wire::CellValue> too_deep = {{0, 4, 0}, {1, 99, 0}};  // nor row 4 or 99
  EXPECT_EQ(replica.Apply(Replica(0, 1, 2), too_deep).unknown, 2u);
  EXPECT_THROW(replica.ApplyKeys(1, std::vector<hot::Key>{99}, std::vector<float>{1}),
               std::invalid_argument);
  EXPECT_THROW(replica.ApplyKeys(1, std::vector<hot::Key>{2}, std::vector<float>{1}),
               std::invalid_argument);
  EXPECT_THROW((void)HotReplica(set, std::vector<std::uint16_t>{0, 1}), std::invalid_argument);
}

}  // namespace
}  // namespace libra::hotpath

namespace libra::hotpath {
namespace {

// What a server would have to resend: the holes below what came, and, while
// the LAST has not come, everything after the newest packet; a stream of
// which nothing came is all tail; a complete server lacks nothing.
TEST(HotReplica, LostPacketsNameTheHolesAndTheTailOfEachIncompleteStream) {
  const HotSet set = MakeHotSet();
  HotReplica replica(set, kOwners, 4);
  auto packets = ValuesFor(set, {1, 2}, {0.5f, 1.5f, 2.5f});
  replica.Apply(Replica(0, 4, 0), packets[0]);
  replica.Apply(Replica(0, 4, 2), packets[2]);  // seq 1 lost, LAST not yet come
  const auto no_tail = kNoStreamTail;
  EXPECT_EQ(replica.LostPackets(4), (std::vector<StreamLoss>{{0, 4, {1}, 3}, {1, 4, {}, 0}}));

  // Its LAST came: the length is known, only the hole is lost.
  replica.Apply(Replica(0, 4, 3, true), ValuesFor(set, {1}, {0.5f})[0]);
  EXPECT_EQ(replica.LostPackets(4), (std::vector<StreamLoss>{{0, 4, {1}, no_tail}, {1, 4, {}, 0}}));

  // Server 1's stream complete, server 0's hole filled: nothing lost.
  ApplyStream(replica, 1, 4, ValuesFor(set, {3}, {3.5f}));
  replica.Apply(Replica(0, 4, 1), packets[1]);
  EXPECT_TRUE(replica.LostPackets(4).empty());
  EXPECT_EQ(replica.MinEpoch(), 4u);

  // Two epochs behind on server 1: both of its streams are named.
  ApplyStream(replica, 0, 5, {});
  ApplyStream(replica, 0, 6, {});
  EXPECT_EQ(replica.LostPackets(6), (std::vector<StreamLoss>{{1, 5, {}, 0}, {1, 6, {}, 0}}));
}

}  // namespace
}  // namespace libra::hotpath
