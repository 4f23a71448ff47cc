// A worker's HotSender fed REPLICAs over loopback as the switch would
// replicate them, some forged (signed with another key, or not at all) with
// the real packet's (server, epoch, seq): each forgery is dropped and
// counted, and the real packet, arriving after it, is still taken.
#include <gtest/gtest.h>

#include <bit>
#include <chrono>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "hot/placement.h"
#include "hotpath/messages/hot_packets.h"
#include "hotpath/messages/update_auth.h"
#include "hotpath/worker/hot_sender.h"
#include "net/udp_socket.h"
#include "wait_for.h"
#include "wire/wire.h"

namespace libra::hotpath {
namespace {

using namespace std::chrono_literals;

constexpr std::uint32_t kJobId = 5;
const std::vector<hot::Key> kKeys = {1, 2, 3};

std::shared_ptr<const hot::HotSet> MakeHotSet() {
  return std::make_shared<const hot::HotSet>(hot::PlaceHotSet(
      {{1, 1, 30}, {2, 2, 20}, {3, 1, 10}}, hot::SwitchLayout{2, 4, 2}, hot::HeatPlacement()));
}

// Server 0's one REPLICA of `epoch` carrying `vals` for kKeys, flagged LAST,
// signed with `key`, its type rewritten as the switch does.
EncodedPacket Replica(const hot::HotSet& set, std::uint32_t epoch, const std::vector<float>& vals,
                      const UpdateKey& key) {
  wire::Header header;
  header.type = wire::MessageType::kUpdate;
  header.job_id = kJobId;
  header.node_id = 0;
  header.epoch = epoch;
  std::vector<EncodedPacket> packets =
      PackUpdate(set, header, kKeys, CheckHotValues(set, kKeys, vals, {}), vals);
  EXPECT_EQ(packets.size(), 1u);
  EncodedPacket packet = packets.at(0);
  packet.SetFlags(wire::kFlagLast);
  SignUpdate(key, std::span(packet.bytes.data(), packet.length));
  wire::SetType(packet.bytes.data(), wire::MessageType::kReplica);
  return packet;
}

// A sender of job kJobId that takes REPLICAs from `fake_switch` and checks
// them with `key`.
struct SenderOfJob {
  static HotSenderOptions Options(const UdpEndpoint& fake_switch, const UpdateKey& key) {
    HotSenderOptions options;
    options.job_id = kJobId;
    options.switch_address = fake_switch;
    options.update_key = key;
    return options;
  }
  const std::shared_ptr<const hot::HotSet> set = MakeHotSet();
  const UpdateKey key = NewUpdateKey();
  net::UdpSocket fake_switch{UdpEndpoint{0x7f000001, 0}};
  HotSender sender{set, Options(fake_switch.local(), key)};
};

TEST(HotSenderForgery, AForgedReplicaIsDroppedAndCountedAndTheRealOneThenTaken) {
  SenderOfJob job;
  const std::shared_ptr<const hot::HotSet>& set = job.set;
  const UpdateKey& key = job.key;
  net::UdpSocket& fake_switch = job.fake_switch;
  HotSender& sender = job.sender;
  std::uint64_t sent = 0;
  auto send = [&](const EncodedPacket& packet) {
    ASSERT_TRUE(fake_switch.SendTo(packet.view(), sender.local()));
    ++sent;
    testing::WaitFor([&] { return sender.counters().packets_received == sent; });
  };

  const std::vector<float> real = {1, 2, 3, 4};
  const std::vector<float> poison = {1000, 1000, 1000, 1000};
  // Forgeries of epoch 0's only packet (seq 0, LAST): another key's tag, and
  // the real packet's tag on poisoned values.
  send(Replica(*set, 0, poison, NewUpdateKey()));
  EncodedPacket retagged = Replica(*set, 0, poison, key);
  const EncodedPacket genuine = Replica(*set, 0, real, key);
  std::copy_n(genuine.bytes.begin() + wire::UpdateTagAt(genuine.length), wire::kUpdateTagBytes,
              retagged.bytes.begin() + wire::UpdateTagAt(retagged.length));
  send(retagged);
  EXPECT_EQ(sender.counters().forged_replicas, 2u);
  EXPECT_EQ(sender.counters().replica_packets, 0u);
  EXPECT_EQ(sender.counters().replica_values, 0u);
  EXPECT_FALSE(sender.ReplicaEpoch());  // the forged LAST completed nothing

  // The real packet is not a duplicate of the forged ones.
  send(genuine);
  EXPECT_EQ(sender.counters().replica_packets, 1u);
  EXPECT_EQ(sender.counters().replica_values, 4u);
  EXPECT_EQ(sender.ReplicaEpoch(), 0u);
  std::vector<float> vals;
  std::vector<int> lens;
  ASSERT_EQ(sender.Pull(kKeys, &vals, &lens, 5s), HotPathStatus::kOk);
  EXPECT_EQ(vals, real);

  // Replayed in a later epoch, the real packet would complete epoch 1 with
  // epoch 0's values: refused. Replayed as it was, it changes nothing.
  EncodedPacket moved = genuine;
  moved.SetEpoch(1);
  send(moved);
  EXPECT_EQ(sender.counters().forged_replicas, 3u);
  EXPECT_EQ(sender.ReplicaEpoch(), 0u);
  send(genuine);
  EXPECT_EQ(sender.counters().replica_packets, 2u);
  EXPECT_EQ(sender.counters().replica_values, 4u);
  EXPECT_EQ(sender.counters().stale_replica_values, 4u);
  vals.clear();
  ASSERT_EQ(sender.Pull(kKeys, &vals, &lens, 5s), HotPathStatus::kOk);
  EXPECT_EQ(vals, real);
}

}  // namespace
}  // namespace libra::hotpath

namespace libra::hotpath {
namespace {

std::string AsUpdateBytes(EncodedPacket packet) {
  wire::SetType(packet.bytes.data(), wire::MessageType::kUpdate);  // as the server sent it
  return std::string(reinterpret_cast<const char*>(packet.bytes.data()), packet.length);
}

// A packet repair brings UPDATEs over the control plane: they pass the same
// check as REPLICAs from the switch, so a forged one is dropped and counted,
// and only a genuine UPDATE of this job is taken.
TEST(HotSenderForgery, RepairPacketsAreTakenOnlyIfTheyVerify) {
  SenderOfJob job;
  HotSender& sender = job.sender;
  const std::vector<float> real = {1, 2, 3, 4};
  const EncodedPacket genuine = Replica(*job.set, 0, real, job.key);
  const EncodedPacket forged = Replica(*job.set, 0, {9, 9, 9, 9}, NewUpdateKey());
  EncodedPacket other_job = genuine;
  wire::StoreBig32(other_job.bytes.data() + wire::kJobIdAt, kJobId + 1);
  const std::vector<std::string> packets = {AsUpdateBytes(forged), AsUpdateBytes(other_job),
                                            std::string("\x01\x02", 2), AsUpdateBytes(genuine)};
  EXPECT_EQ(sender.ApplyRepairPackets(packets), 1u);
  const HotSenderCounters counters = sender.counters();
  EXPECT_EQ(counters.forged_replicas, 1u);
  EXPECT_EQ(counters.repair_packets, 1u);
  EXPECT_EQ(counters.replica_values, 4u);
  EXPECT_EQ(sender.ReplicaEpoch(), 0u);
  EXPECT_TRUE(sender.MissingReplicaKeys(0).empty());
  std::vector<float> vals;
  std::vector<int> lens;
  ASSERT_EQ(sender.Pull(kKeys, &vals, &lens, 5s), HotPathStatus::kOk);
  EXPECT_EQ(vals, real);
}

}  // namespace
}  // namespace libra::hotpath
