// The benchmark's push traffic: packets a worker would send (decodable DATA,
// seqs rising per worker and epoch, slot j in array j), every hot value of
// every batch in exactly one slot, and the switch program adds them all.
#include "bench/push_traffic.h"

#include <gtest/gtest.h>

#include <array>
#include <map>
#include <memory>

#include "wire/wire.h"

namespace libra::hotpath {
namespace {

// Decodes a packet the test made; the message is large, so it is kept.
const wire::Message& Decoded(const dataplane::BenchPacket& packet) {
  static auto message = std::make_unique<wire::Message>();
  EXPECT_EQ(wire::Decode(packet.bytes, message.get()), wire::DecodeError::kNone);
  return *message;
}

PushTrafficOptions SmallPushes() {
  PushTrafficOptions options;
  options.workers = 3;
  options.slots_per_packet = 8;
  options.cells_per_array = 64;
  options.batch = 40;
  options.fields = 4;
  options.keys = 4000;
  options.iterations = 3;
  return options;
}

TEST(PushTraffic, PacketsAreWorkersDataWithEveryHotValueOnce) {
  const PushTrafficOptions options = SmallPushes();
  const PushTraffic made = MakePushTraffic(options);
  EXPECT_EQ(made.hot_keys, 8u * 64u);  // the hot set fills the cells
  EXPECT_GT(made.hot_share, 0.3);
  EXPECT_LT(made.hot_share, 1.0);
  ASSERT_EQ(made.traffic.epochs.size(), 3u);
  std::uint64_t packets = 0;
  std::uint64_t values = 0;
  std::uint64_t partly_empty = 0;
  for (const auto& epoch : made.traffic.epochs) {
    std::map<std::uint16_t, std::uint32_t> next_seq;
    for (const dataplane::BenchPacket& packet : epoch) {
      const wire::Message& message = Decoded(packet);
      const wire::Header& header = message.header;
      const auto& slots = message.slots;
      EXPECT_EQ(header.type, wire::MessageType::kData);
      EXPECT_EQ(header.node_id, packet.worker);
      EXPECT_EQ(header.seq, next_seq[packet.worker]++);
      ASSERT_LE(header.slot_count, 8);
      int valid = 0;
      for (int j = 0; j < header.slot_count; ++j) {
        if (!slots[j].valid) continue;
        ++valid;
        EXPECT_LT(slots[j].index, 64u);
      }
      EXPECT_GT(valid, 0);
      partly_empty += valid < 8;
      values += valid;
      ++packets;
    }
    EXPECT_EQ(next_seq.size(), 3u);
  }
  EXPECT_EQ(packets, made.packets);
  EXPECT_EQ(values, made.values);
  EXPECT_GT(partly_empty, 0u);  // sparse pushes leave holes
  // Workers share keys, so an epoch's cells are fewer than its values, and
  // more than one worker's.
  EXPECT_LT(made.cells_per_epoch, double(values) / 3);
  EXPECT_GT(made.cells_per_epoch, double(values) / 3 / 3);

  const dataplane::ProgramBenchmarkResult result =
      dataplane::RunProgramBenchmark(made.traffic, 0.01, dataplane::PipelineProfile::Tofino1());
  // Whole rounds of the three epochs in turn; every value added.
  ASSERT_GT(result.packets, 0u);
  std::uint64_t expected_values = 0;
  std::uint64_t expected_packets = 0;
  for (std::size_t round = 0; expected_packets < result.packets; ++round) {
    const auto& epoch = made.traffic.epochs[round % 3];
    expected_packets += epoch.size();
    for (const auto& packet : epoch) {
      const wire::Message& message = Decoded(packet);
      for (int j = 0; j < message.header.slot_count; ++j) {
        expected_values += message.slots[j].valid;
      }
    }
  }
  EXPECT_EQ(expected_packets, result.packets);
  EXPECT_EQ(result.values, expected_values);
}

TEST(PushTraffic, TheSameSeedMakesTheSameBytes) {
  const PushTraffic a = MakePushTraffic(SmallPushes());
  const PushTraffic b = MakePushTraffic(SmallPushes());
  ASSERT_EQ(a.traffic.epochs.size(), b.traffic.epochs.size());
  for (std::size_t e = 0; e < a.traffic.epochs.size(); ++e) {
    ASSERT_EQ(a.traffic.epochs[e].size(), b.traffic.epochs[e].size());
    for (std::size_t k = 0; k < a.traffic.epochs[e].size(); ++k) {
      EXPECT_EQ(a.traffic.epochs[e][k].bytes, b.traffic.epochs[e][k].bytes);
    }
  }
}

TEST(PushTraffic, AnOptionOutOfRangeIsNamed) {
  PushTrafficOptions options = SmallPushes();
  options.skew = -1;
  try {
    MakePushTraffic(options);
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("skew"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace libra::hotpath
