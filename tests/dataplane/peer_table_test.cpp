// The peer table: exact match of (IPv4, port), through growth.
#include "dataplane/peer_table.h"

#include <gtest/gtest.h>

namespace libra::dataplane {
namespace {

TEST(PeerTableTest, FindsWhatWasInsertedAndNothingElse) {
  PeerTable table;
  EXPECT_EQ(table.Find({0x7f000001, 1}), nullptr);  // empty
  // Enough entries to grow several times; addresses differ in IP and in port.
  for (std::uint16_t i = 0; i < 300; ++i) {
    const PeerRole role = i % 2 == 0 ? PeerRole::kWorker : PeerRole::kServer;
    ASSERT_TRUE(table.Insert({0x0a000000u + i / 4, static_cast<std::uint16_t>(5000 + i % 4)},
                             Peer{role, i}));
  }
  EXPECT_EQ(table.size(), 300u);
  for (std::uint16_t i = 0; i < 300; ++i) {
    const Peer* peer = table.Find({0x0a000000u + i / 4, static_cast<std::uint16_t>(5000 + i % 4)});
    ASSERT_NE(peer, nullptr) << i;
    EXPECT_EQ(peer->id, i);
    EXPECT_EQ(peer->role, i % 2 == 0 ? PeerRole::kWorker : PeerRole::kServer);
  }
  EXPECT_EQ(table.Find({0x0a000000u, 4999}), nullptr);
  EXPECT_EQ(table.Find({0x0b000000u, 5000}), nullptr);
}

TEST(PeerTableTest, RefusesADuplicateAndKeepsTheFirst) {
  PeerTable table;
  ASSERT_TRUE(table.Insert({0x7f000001, 9000}, Peer{PeerRole::kWorker, 3}));
  EXPECT_FALSE(table.Insert({0x7f000001, 9000}, Peer{PeerRole::kServer, 4}));
  EXPECT_EQ(table.size(), 1u);
  EXPECT_EQ(table.Find({0x7f000001, 9000})->id, 3);
  table.Clear();
  EXPECT_EQ(table.Find({0x7f000001, 9000}), nullptr);
  EXPECT_TRUE(table.Insert({0x7f000001, 9000}, Peer{PeerRole::kServer, 4}));
}

}  // namespace
}  // namespace libra::dataplane
