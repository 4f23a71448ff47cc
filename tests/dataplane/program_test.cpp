// Scenarios of the per-packet switch program, packet by packet, against
// every back end of the build (common/switch_backends.h): the model, and the
// XDP program in lockstep with a model, every output and counter compared.
#include "dataplane/program.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <map>
#include <random>
#include <vector>

#include "common/switch_backends.h"
#include "dataplane/stateful_ops.h"

namespace libra::dataplane {
namespace {

using wire::MessageType;

constexpr std::uint32_t kJob = 7;
constexpr int kWorkers = 3;
constexpr int kServers = 2;
constexpr int kSlots = 4;
constexpr std::uint32_t kCells = 16;
constexpr int kScale = 16;

std::uint32_t Bits(float x) { return std::bit_cast<std::uint32_t>(x); }
float Float(std::uint32_t bits) { return std::bit_cast<float>(bits); }

UdpEndpoint WorkerAddress(int w) { return {0x0a000001u + static_cast<std::uint32_t>(w), 5000}; }
UdpEndpoint ServerAddress(int s) { return {0x0a000101u + static_cast<std::uint32_t>(s), 6000}; }

SwitchJob MakeJob() {
  SwitchJob job;
  job.job_id = kJob;
  job.token = "secret";
  for (int w = 0; w < kWorkers; ++w) job.workers.push_back(WorkerAddress(w));
  for (int s = 0; s < kServers; ++s) job.servers.push_back(ServerAddress(s));
  job.cells_per_array = kCells;
  job.scale_bits = kScale;
  job.slots_per_packet = kSlots;
  return job;
}

struct Reply {
  UdpEndpoint to;
  wire::Message message;
  std::vector<std::uint8_t> bytes;
  const wire::Header& header() const { return message.header; }
};

// A value for slot j: (cell index, float32).
struct SlotValue {
  int slot;
  std::uint32_t index;
  float value;
};

std::vector<std::uint8_t> Packet(MessageType type, int node, std::uint32_t epoch, std::uint32_t seq,
                                 const std::vector<SlotValue>& values = {},
                                 std::uint16_t slot_count = 0, std::uint32_t job = kJob,
                                 std::uint16_t flags = 0) {
  wire::Header header;
  header.type = type;
  header.job_id = job;
  header.node_id = static_cast<std::uint16_t>(node);
  header.epoch = epoch;
  header.seq = seq;
  header.flags = flags;
  std::array<wire::Slot, wire::kMaxSlots> slots{};
  for (const SlotValue& v : values) {
    slots[v.slot] = wire::Slot{true, false, v.index, Bits(v.value)};
    slot_count = std::max<std::uint16_t>(slot_count, static_cast<std::uint16_t>(v.slot + 1));
  }
  header.slot_count = slot_count;
  std::vector<std::uint8_t> bytes(wire::EncodedSize(slot_count));
  EXPECT_EQ(wire::Encode(header, slots, bytes), bytes.size());
  return bytes;
}

// An UPDATE of server `node` carrying `cells` (sorted by row, then array).
std::vector<std::uint8_t> UpdatePacket(int node, std::uint32_t epoch, std::uint32_t seq,
                                       const std::vector<wire::CellValue>& cells,
                                       std::uint16_t flags = 0) {
  wire::Header header;
  header.type = MessageType::kUpdate;
  header.job_id = kJob;
  header.node_id = static_cast<std::uint16_t>(node);
  header.epoch = epoch;
  header.seq = seq;
  header.flags = flags;
  std::vector<std::uint8_t> bytes(wire::UpdateSize(cells));
  EXPECT_EQ(wire::EncodeUpdate(header, cells, bytes), bytes.size());
  return bytes;
}

// The RESULT slots by the COLLECT slot they answer (RESULT is compacted:
// only written cells, each naming its slot, in increasing order).
std::map<int, wire::Slot> Answers(const Reply& result) {
  std::map<int, wire::Slot> by_slot;
  int previous = -1;
  for (std::size_t i = 0; i < result.header().slot_count; ++i) {
    const wire::Slot& slot = result.message.slots[i];
    EXPECT_TRUE(slot.valid);
    EXPECT_GT(static_cast<int>(slot.index), previous);
    previous = static_cast<int>(slot.index);
    by_slot[previous] = slot;
  }
  return by_slot;
}
// The fixed-point sum answering COLLECT slot j (a RESULT carries the
// register's sum as it is); 0 when the cell was not written (and so left
// out).
std::int32_t FixedSumAt(const Reply& result, int j) {
  const auto answers = Answers(result);
  const auto found = answers.find(j);
  return found == answers.end() ? 0 : static_cast<std::int32_t>(found->second.value);
}
// The same as the server takes it: its float32.
float SumAt(const Reply& result, int j) {
  return Float(FixedPointCodec(kScale).ToFloatBits(FixedSumAt(result, j)));
}
bool SaturatedAt(const Reply& result, int j) {
  const auto answers = Answers(result);
  const auto found = answers.find(j);
  return found != answers.end() && found->second.saturated;
}
bool Answered(const Reply& result, int j) { return Answers(result).count(j) != 0; }

class ProgramTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::string skip;
    backend_ = testing::MakeSwitchBackend(GetParam(), &skip);
    if (backend_ == nullptr) GTEST_SKIP() << GetParam() << " back end unavailable: " << skip;
    ASSERT_TRUE(backend_->InstallJob(MakeJob()).ok);
  }

  std::vector<Reply> Send(const std::vector<std::uint8_t>& bytes, const UdpEndpoint& from) {
    OutputBatch out;
    backend_->Process(bytes, from, out);
    std::vector<Reply> replies;
    for (std::size_t i = 0; i < out.size(); ++i) {
      Reply reply{out[i].destination, {}, {}};
      reply.bytes.assign(out[i].payload().begin(), out[i].payload().end());
      EXPECT_EQ(wire::Decode(out[i].payload(), &reply.message), wire::DecodeError::kNone);
      replies.push_back(reply);
    }
    return replies;
  }

  std::vector<Reply> SendData(int w, std::uint32_t epoch, std::uint32_t seq,
                              const std::vector<SlotValue>& values, std::uint16_t flags = 0) {
    return Send(Packet(MessageType::kData, w, epoch, seq, values, 0, kJob, flags),
                WorkerAddress(w));
  }
  std::vector<Reply> SendFin(int w, std::uint32_t epoch, std::uint32_t packets) {
    return Send(Packet(MessageType::kFin, w, epoch, packets), WorkerAddress(w));
  }
  std::vector<Reply> SendCollect(int s, std::uint32_t epoch, const std::vector<SlotValue>& cells) {
    return Send(Packet(MessageType::kCollect, s, epoch, 1, cells), ServerAddress(s));
  }
  // Every worker sends one DATA packet (seq 0) with `values` scaled by (w + 1), then FIN.
  void RunEpoch(std::uint32_t epoch, const std::vector<SlotValue>& values) {
    for (int w = 0; w < kWorkers; ++w) {
      std::vector<SlotValue> mine = values;
      for (auto& v : mine) v.value *= static_cast<float>(w + 1);
      ASSERT_EQ(SendData(w, epoch, 0, mine).size(), 1u);
      SendFin(w, epoch, 1);
    }
  }
  // What the switch must answer: the same fixed-point sum.
  std::int32_t Reference(const std::vector<float>& addends) const {
    const FixedPointCodec codec(kScale);
    std::int32_t sum = 0;
    for (float x : addends) sum = SaturatingAdd(sum, codec.ToFixed(Bits(x)).value).value;
    return sum;
  }
  std::uint64_t Drops(DropReason reason) const { return backend_->Counters()[reason]; }
  // Sends kPackets DATA packets per worker in epoch 0, each packet's slots from
  // `make_values`, then checks every cell's RESULT against sums computed here.
  template <typename MakeValues>
  void ExpectSumsMatchReference(MakeValues make_values) {
    const FixedPointCodec codec(kScale);
    std::map<std::pair<int, std::uint32_t>, std::int32_t> sums;  // (array, cell) -> fixed sum
    std::map<std::pair<int, std::uint32_t>, bool> flagged;
    constexpr std::uint32_t kPackets = 40;
    for (std::uint32_t seq = 0; seq < kPackets; ++seq) {
      for (int w = 0; w < kWorkers; ++w) {
        const std::vector<SlotValue> values = make_values(seq);
        ASSERT_EQ(SendData(w, 0, seq, values).size(), 1u);
        for (const SlotValue& v : values) {
          const FixedValue fixed = codec.ToFixed(Bits(v.value));
          const SaturatingSum sum = SaturatingAdd(sums[{v.slot, v.index}], fixed.value);
          sums[{v.slot, v.index}] = sum.value;
          if (sum.saturated || fixed.status != ConversionStatus::kOk)
            flagged[{v.slot, v.index}] = true;
        }
      }
    }
    for (int w = 0; w < kWorkers; ++w) SendFin(w, 0, kPackets);
    EXPECT_EQ(backend_->Counters().TotalDrops(), 0u);
    for (std::uint32_t i = 0; i < kCells; ++i) {
      std::vector<SlotValue> ask;
      for (int j = 0; j < kSlots; ++j) ask.push_back({j, i, 0});
      const auto result = SendCollect(0, 0, ask);
      ASSERT_EQ(result.size(), 1u);
      for (int j = 0; j < kSlots; ++j) {
        const auto key = std::make_pair(j, i);
        const std::int32_t expected = sums.count(key) != 0 ? sums[key] : 0;
        EXPECT_EQ(Answered(result[0], j), sums.count(key) != 0) << j << "," << i;
        EXPECT_EQ(FixedSumAt(result[0], j), expected) << j << "," << i;
        EXPECT_EQ(SaturatedAt(result[0], j), flagged.count(key) != 0) << j << "," << i;
      }
    }
  }

  std::unique_ptr<SwitchBackend> backend_;
};

TEST_P(ProgramTest, AggregatesAllWorkersAndAnswersCollect) {
  const float xs[kWorkers] = {0.5f, -1.25f, 3.0e-3f};
  for (int w = 0; w < kWorkers; ++w) {
    const auto replies = SendData(w, 0, 0, {{0, 2, xs[w]}, {2, 5, 10.0f * xs[w]}});
    ASSERT_EQ(replies.size(), 1u);
    EXPECT_EQ(replies[0].header().type, MessageType::kAck);
    EXPECT_EQ(replies[0].to, WorkerAddress(w));
    EXPECT_EQ(replies[0].header().node_id, w);
    EXPECT_EQ(replies[0].header().flags, 0);
  }
  for (int w = 0; w < kWorkers; ++w) SendFin(w, 0, 1);

  const auto result = SendCollect(1, 0, {{0, 2, 0}, {1, 7, 0}, {2, 5, 0}});
  ASSERT_EQ(result.size(), 1u);
  const Reply& r = result[0];
  EXPECT_EQ(r.to, ServerAddress(1));
  EXPECT_EQ(r.header().type, MessageType::kResult);
  EXPECT_EQ(r.header().flags, 0);
  // No worker wrote cell 7 of array 1: its slot is left out.
  ASSERT_EQ(r.header().slot_count, 2);
  EXPECT_EQ(r.message.slots[0].index, 0u);  // answers COLLECT slot 0
  EXPECT_EQ(r.message.slots[1].index, 2u);
  EXPECT_FALSE(Answered(r, 1));
  EXPECT_EQ(FixedSumAt(r, 0), Reference({xs[0], xs[1], xs[2]}));
  EXPECT_EQ(FixedSumAt(r, 2), Reference({10 * xs[0], 10 * xs[1], 10 * xs[2]}));
  EXPECT_NEAR(SumAt(r, 0), 0.5 - 1.25 + 3.0e-3, 3 * std::ldexp(1.0, -kScale));
  EXPECT_EQ(backend_->Counters()[Event::kValuesAggregated], 6u);
}

TEST_P(ProgramTest, CollectByRowReadsThatCellOfEveryArray) {
  RunEpoch(0, {{0, 4, 1.0f}, {2, 4, 2.0f}, {1, 5, 3.0f}});
  const auto result =
      Send(Packet(MessageType::kCollect, 0, 0, 9, {{0, 4, 0}}, 0, kJob, wire::kFlagRow),
           ServerAddress(0));
  ASSERT_EQ(result.size(), 1u);
  EXPECT_EQ(result[0].header().type, MessageType::kResult);
  EXPECT_EQ(result[0].header().seq, 9u);
  EXPECT_EQ(result[0].header().flags, 0);
  // Row 4 was written in arrays 0 and 2; array 1 wrote row 5, array 3 nothing.
  ASSERT_EQ(result[0].header().slot_count, 2);
  EXPECT_EQ(SumAt(result[0], 0), 1.0f * (1 + 2 + 3));
  EXPECT_EQ(SumAt(result[0], 2), 2.0f * (1 + 2 + 3));
  EXPECT_FALSE(Answered(result[0], 1));
  EXPECT_FALSE(Answered(result[0], 3));
  // A ROW request without its slot reads nothing.
  const auto empty =
      Send(Packet(MessageType::kCollect, 0, 0, 10, {}, 0, kJob, wire::kFlagRow), ServerAddress(0));
  ASSERT_EQ(empty.size(), 1u);
  EXPECT_EQ(empty[0].header().slot_count, 0);
}

// The ACK of a DATA the switch adds echoes its RETRANSMISSION flag: the
// worker learns that the first send was lost (the resend was added), or was
// only late (the first send was added; the resend is then a duplicate).
TEST_P(ProgramTest, TheAckOfAnAddedResendSaysItWasTheResend) {
  const auto first = SendData(0, 0, 0, {{0, 1, 1.0f}});
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].header().flags, 0);
  const auto resend = SendData(0, 0, 1, {{1, 1, 1.0f}}, wire::kFlagRetransmission);
  ASSERT_EQ(resend.size(), 1u);
  EXPECT_EQ(resend[0].header().type, MessageType::kAck);
  EXPECT_EQ(resend[0].header().flags, wire::kFlagRetransmission);
  const auto again = SendData(0, 0, 1, {{1, 1, 1.0f}}, wire::kFlagRetransmission);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].header().flags, wire::kFlagDuplicate);
}

TEST_P(ProgramTest, RetransmissionAfterAggregationIsAckedButNotAddedAgain) {
  SendData(0, 0, 0, {{0, 1, 1.0f}});
  const auto again = SendData(0, 0, 0, {{0, 1, 1.0f}}, wire::kFlagRetransmission);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].header().type, MessageType::kAck);
  EXPECT_EQ(again[0].header().flags, wire::kFlagDuplicate);
  EXPECT_EQ(backend_->Counters()[Event::kDataDuplicates], 1u);
  EXPECT_EQ(backend_->Counters()[Event::kRetransmissions], 1u);
  for (int w = 1; w < kWorkers; ++w) SendData(w, 0, 0, {});
  for (int w = 0; w < kWorkers; ++w) SendFin(w, 0, 1);
  const auto result = SendCollect(0, 0, {{0, 1, 0}});
  ASSERT_EQ(result.size(), 1u);
  EXPECT_EQ(SumAt(result[0], 0), 1.0f);
}

TEST_P(ProgramTest, LateDuplicateWithinTheWindowIsIgnored) {
  for (std::uint32_t seq = 0; seq < 5; ++seq) SendData(0, 0, seq, {{0, 3, 2.0f}});
  SendData(0, 0, 1, {{0, 3, 2.0f}});
  SendData(0, 0, 4, {{0, 3, 2.0f}});
  EXPECT_EQ(backend_->Counters()[Event::kDataDuplicates], 2u);
  EXPECT_EQ(backend_->Counters()[Event::kValuesAggregated], 5u);
}

TEST_P(ProgramTest, FinFromEveryWorkerSendsReadyToEveryServer) {
  for (int w = 0; w < kWorkers; ++w) SendData(w, 0, 0, {{0, 0, 1.0f}});
  auto ack = SendFin(0, 0, 1);
  ASSERT_EQ(ack.size(), 1u);
  EXPECT_EQ(ack[0].header().type, MessageType::kAck);
  EXPECT_EQ(ack[0].header().flags, wire::kFlagFin);
  EXPECT_EQ(ack[0].header().seq, 1u);

  ack = SendFin(0, 0, 1);  // a retransmitted FIN counts once
  ASSERT_EQ(ack.size(), 1u);
  EXPECT_EQ(ack[0].header().flags, wire::kFlagFin | wire::kFlagDuplicate);
  EXPECT_EQ(SendFin(1, 0, 1).size(), 1u);

  const auto last = SendFin(2, 0, 1);
  ASSERT_EQ(last.size(), 1u + kServers);
  for (int s = 0; s < kServers; ++s) {
    const Reply& ready = last[1 + s];
    EXPECT_EQ(ready.header().type, MessageType::kReady);
    EXPECT_EQ(ready.to, ServerAddress(s));
    EXPECT_EQ(ready.header().node_id, s);
    EXPECT_EQ(ready.header().epoch, 0u);
  }
  EXPECT_EQ(backend_->Counters()[Event::kEpochsReady], 1u);
  EXPECT_EQ(backend_->Counters()[Event::kFinDuplicates], 1u);
}

TEST_P(ProgramTest, FinThatCountsOtherDataThanSeenIsDropped) {
  SendData(0, 0, 0, {{0, 0, 1.0f}});
  EXPECT_TRUE(SendFin(0, 0, 2).empty());
  EXPECT_TRUE(SendFin(1, 0, 1).empty());
  EXPECT_EQ(Drops(DropReason::kFinCountMismatch), 2u);
  EXPECT_EQ(SendFin(1, 0, 0).size(), 1u);  // a worker with no hot values this epoch
}

TEST_P(ProgramTest, CollectBeforeReadyIsAnsweredNotReady) {
  SendData(0, 0, 0, {{0, 0, 1.0f}});
  SendFin(0, 0, 1);
  const auto result = SendCollect(0, 0, {{0, 0, 0}});
  ASSERT_EQ(result.size(), 1u);
  EXPECT_EQ(result[0].header().type, MessageType::kResult);
  EXPECT_EQ(result[0].header().flags, wire::kFlagNotReady);
  EXPECT_EQ(result[0].header().slot_count, 0);
  EXPECT_EQ(backend_->Counters()[Event::kCollectNotReady], 1u);
}

TEST_P(ProgramTest, ReCollectReadsTheSameBits) {
  RunEpoch(0, {{0, 4, 0.1f}, {3, 9, -7.5f}});
  const auto first = SendCollect(0, 0, {{0, 4, 0}, {3, 9, 0}});
  const auto second = SendCollect(0, 0, {{0, 4, 0}, {3, 9, 0}});
  ASSERT_EQ(first.size(), 1u);
  ASSERT_EQ(second.size(), 1u);
  for (int j : {0, 3}) {
    EXPECT_EQ(FixedSumAt(first[0], j), FixedSumAt(second[0], j));
  }
  EXPECT_EQ(FixedSumAt(first[0], 3), Reference({-7.5f, -15.0f, -22.5f}));
}

TEST_P(ProgramTest, DataOfAnOlderEpochLeavesTheNewerBankAlone) {
  // Worker 0 is two epochs ahead of worker 1: the same bank, a newer tag.
  ASSERT_EQ(SendData(0, 2, 0, {{0, 3, 1.0f}, {1, 3, 2.0f}}).size(), 1u);
  ASSERT_EQ(SendData(1, 0, 0, {{0, 3, 5.0f}, {1, 3, 6.0f}}).size(), 1u);  // one row: both stale
  ASSERT_EQ(SendData(1, 0, 1, {{0, 3, 5.0f}, {1, 4, 6.0f}}).size(), 1u);  // two rows: one stale
  EXPECT_EQ(backend_->Counters()[Event::kValuesStale], 3u);
  EXPECT_EQ(backend_->Counters()[Event::kValuesAggregated], 3u);
  SendFin(0, 2, 1);
  for (int w = 1; w < kWorkers; ++w) SendFin(w, 2, 0);
  const auto result = SendCollect(0, 2, {{0, 3, 0}, {1, 3, 0}});
  ASSERT_EQ(result.size(), 1u);
  EXPECT_EQ(SumAt(result[0], 0), 1.0f);
  EXPECT_EQ(SumAt(result[0], 1), 2.0f);
}

TEST_P(ProgramTest, BankIsReusedTwoEpochsLater) {
  RunEpoch(0, {{0, 1, 1.0f}, {1, 2, 2.0f}});
  RunEpoch(1, {{0, 1, 4.0f}});
  RunEpoch(2, {{0, 1, 8.0f}});  // bank 0 again; cell (1, 2) not touched
  const auto result = SendCollect(0, 2, {{0, 1, 0}, {1, 2, 0}});
  ASSERT_EQ(result.size(), 1u);
  EXPECT_EQ(SumAt(result[0], 0), 8.0f * (1 + 2 + 3));
  EXPECT_FALSE(Answered(result[0], 1));  // epoch 0's sum is not epoch 2's
  const auto epoch1 = SendCollect(0, 1, {{0, 1, 0}});
  ASSERT_EQ(epoch1.size(), 1u);
  EXPECT_EQ(SumAt(epoch1[0], 0), 4.0f * 6);
  // Epoch 0 is gone from its bank: a COLLECT for it is stale.
  EXPECT_TRUE(SendCollect(0, 0, {{0, 1, 0}}).empty());
  EXPECT_EQ(Drops(DropReason::kStaleEpoch), 1u);
}

TEST_P(ProgramTest, TwoEpochsInFlightStayApart) {
  // Worker 0 runs ahead into epoch 1 while workers 1 and 2 are still in epoch 0.
  SendData(0, 0, 0, {{0, 0, 1.0f}});
  SendFin(0, 0, 1);
  SendData(0, 1, 0, {{0, 0, 100.0f}});
  SendData(1, 0, 0, {{0, 0, 2.0f}});
  SendFin(0, 1, 1);
  SendData(1, 1, 0, {{0, 0, 200.0f}});
  SendFin(1, 0, 1);
  SendData(2, 0, 0, {{0, 0, 3.0f}});
  SendFin(2, 0, 1);
  SendFin(1, 1, 1);
  SendData(2, 1, 0, {{0, 0, 300.0f}});
  const auto last = SendFin(2, 1, 1);
  EXPECT_EQ(last.size(), 1u + kServers);
  EXPECT_EQ(SumAt(SendCollect(0, 0, {{0, 0, 0}})[0], 0), 6.0f);
  EXPECT_EQ(SumAt(SendCollect(0, 1, {{0, 0, 0}})[0], 0), 600.0f);
}

// A RESULT carries the register's sum, not its float32: past 2^24 steps a
// float would lose the last ones, and the server's check needs every step.
TEST_P(ProgramTest, ASumPastTwoToThe24IsAnsweredExactly) {
  const float step = std::ldexp(1.0f, -kScale);
  for (int w = 0; w < kWorkers; ++w) {
    SendData(w, 0, 0, {{0, 0, w == 0 ? 256.0f : w == 1 ? step : 0.0f}});  // 2^24 + 1 steps
    SendFin(w, 0, 1);
  }
  const auto result = SendCollect(0, 0, {{0, 0, 0}});
  ASSERT_EQ(result.size(), 1u);
  EXPECT_EQ(result[0].header().flags, 0);
  EXPECT_EQ(FixedSumAt(result[0], 0), (1 << 24) + 1);
  const FixedPointCodec codec(kScale);
  EXPECT_EQ(codec.ToFloatBits((1 << 24) + 1), codec.ToFloatBits((1 << 24) + 2))
      << "its float32 cannot tell";
}

TEST_P(ProgramTest, SaturationIsFlaggedInResult) {
  RunEpoch(0, {{0, 0, 16000.0f}, {1, 0, 1.0f}});  // 16000 * (1 + 2 + 3) > 2^15
  const auto result = SendCollect(0, 0, {{0, 0, 0}, {1, 0, 0}});
  ASSERT_EQ(result.size(), 1u);
  EXPECT_EQ(result[0].header().flags, wire::kFlagSaturated);
  EXPECT_TRUE(SaturatedAt(result[0], 0));
  EXPECT_FALSE(SaturatedAt(result[0], 1));
  EXPECT_EQ(SumAt(result[0], 1), 6.0f);
  EXPECT_EQ(backend_->Counters()[Event::kResultsSaturated], 1u);
}

TEST_P(ProgramTest, NanAndInfinityAreRejectedAndFlagTheirCell) {
  SendData(0, 0, 0, {{0, 0, 1.0f}, {1, 0, 1.0f}});
  SendData(1, 0, 0, {{0, 0, std::nanf("")}, {1, 0, 1.0f}});
  SendData(2, 0, 0, {{0, 0, 1.0f}, {1, 0, -INFINITY}});
  for (int w = 0; w < kWorkers; ++w) SendFin(w, 0, 1);
  const auto result = SendCollect(0, 0, {{0, 0, 0}, {1, 0, 0}});
  ASSERT_EQ(result.size(), 1u);
  EXPECT_TRUE(SaturatedAt(result[0], 0));
  EXPECT_TRUE(SaturatedAt(result[0], 1));
  EXPECT_EQ(SumAt(result[0], 0), 2.0f);  // the NaN added nothing
  EXPECT_EQ(backend_->Counters()[Event::kValuesRejected], 2u);
  EXPECT_EQ(backend_->Counters()[Event::kValuesAggregated], 4u);
}

TEST_P(ProgramTest, WrongJobUnknownWorkerAndForgedIdAreDropped) {
  EXPECT_TRUE(
      Send(Packet(MessageType::kData, 0, 0, 0, {{0, 0, 1.0f}}, 0, kJob + 1), WorkerAddress(0))
          .empty());
  EXPECT_EQ(Drops(DropReason::kWrongJob), 1u);
  EXPECT_TRUE(
      Send(Packet(MessageType::kData, 0, 0, 0, {{0, 0, 1.0f}}), {0x0b000001, 5000}).empty());
  EXPECT_EQ(Drops(DropReason::kUnknownPeer), 1u);
  EXPECT_TRUE(Send(Packet(MessageType::kData, 0, 0, 0, {{0, 0, 1.0f}}), WorkerAddress(1)).empty());
  EXPECT_EQ(Drops(DropReason::kNodeIdMismatch), 1u);
  EXPECT_TRUE(Send(Packet(MessageType::kCollect, 0, 0, 0, {{0, 0, 0}}), WorkerAddress(0)).empty());
  EXPECT_TRUE(Send(Packet(MessageType::kAck, 0, 0, 0), WorkerAddress(0)).empty());
  EXPECT_TRUE(Send(Packet(MessageType::kData, 0, 0, 0, {{0, 0, 1.0f}}), ServerAddress(0)).empty());
  EXPECT_EQ(Drops(DropReason::kUnexpectedType), 3u);
  EXPECT_EQ(backend_->Counters()[Event::kValuesAggregated], 0u);
}

// What the switch cannot stop (docs/reliability.md, "What an attacker on
// the data path can do"): it admits a packet by its source address, so a
// forger who spoofs a worker's address and gets a DATA in before the
// worker's own takes that packet's place in the sum, and the real one is
// then ACKed as a duplicate and left out. Only the hosts can authenticate
// (UPDATE/REPLICA carry a MAC); a sum has no host to sign it.
TEST_P(ProgramTest, ASpoofedDataBeforeTheRealOneTakesItsPlaceInTheSum) {
  ASSERT_EQ(SendData(0, 0, 0, {{0, 1, 1000.0f}}).size(), 1u);  // the forger, as worker 0
  const auto real = SendData(0, 0, 0, {{0, 1, 1.0f}});
  ASSERT_EQ(real.size(), 1u);
  EXPECT_EQ(real[0].header().flags, wire::kFlagDuplicate);
  for (int w = 1; w < kWorkers; ++w) SendData(w, 0, 0, {});
  for (int w = 0; w < kWorkers; ++w) SendFin(w, 0, 1);
  const auto result = SendCollect(0, 0, {{0, 1, 0}});
  ASSERT_EQ(result.size(), 1u);
  EXPECT_EQ(SumAt(result[0], 0), 1000.0f);
}

TEST_P(ProgramTest, OutOfRangeIndexDropsTheWholePacket) {
  EXPECT_TRUE(SendData(0, 0, 0, {{0, 1, 1.0f}, {1, kCells, 1.0f}}).empty());
  EXPECT_EQ(Drops(DropReason::kCellIndexOutOfRange), 1u);
  EXPECT_EQ(backend_->Counters()[Event::kValuesAggregated], 0u);
  // Nothing was recorded either: the same packet, fixed, is new.
  EXPECT_EQ(SendData(0, 0, 0, {{0, 1, 1.0f}})[0].header().flags, 0);
}

TEST_P(ProgramTest, MalformedPacketsAreDroppedByReason) {
  const auto good = Packet(MessageType::kData, 0, 0, 0, {{0, 0, 1.0f}});
  const std::vector<std::uint8_t> truncated(good.begin(), good.end() - 1);
  auto oversized = good;
  oversized.push_back(0);
  auto old_version = good;
  old_version[wire::kVersionAt] = 0;
  auto bad_type = good;
  bad_type[wire::kTypeAt] = 200;
  for (const auto& bytes : {truncated, oversized, old_version, bad_type}) {
    EXPECT_TRUE(Send(bytes, WorkerAddress(0)).empty());
  }
  EXPECT_TRUE(Send({}, WorkerAddress(0)).empty());
  EXPECT_EQ(Drops(DropReason::kTruncated), 2u);
  EXPECT_EQ(Drops(DropReason::kOversized), 1u);
  EXPECT_EQ(Drops(DropReason::kBadVersion), 1u);
  EXPECT_EQ(Drops(DropReason::kUnknownType), 1u);

  // More slots than the job's P, and a FIN carrying slots.
  EXPECT_TRUE(Send(Packet(MessageType::kData, 0, 0, 0, {}, kSlots + 1), WorkerAddress(0)).empty());
  EXPECT_TRUE(Send(Packet(MessageType::kFin, 0, 0, 0, {}, 1), WorkerAddress(0)).empty());
  EXPECT_EQ(Drops(DropReason::kTooManySlots), 2u);
  EXPECT_TRUE(SendData(0, kMaxEpoch + 1, 0, {}).empty());
  EXPECT_EQ(Drops(DropReason::kEpochOutOfRange), 1u);
  EXPECT_EQ(backend_->Counters().TotalDrops(), 8u);
}

TEST_P(ProgramTest, InvalidSlotsAreIgnoredWhateverTheirIndex) {
  // Slot 1 is a hole whose index is out of range: it must neither drop the
  // packet nor touch a cell.
  wire::Header header;
  header.type = MessageType::kData;
  header.job_id = kJob;
  header.slot_count = 3;
  const std::array<wire::Slot, 3> slots = {wire::Slot{true, false, 2, Bits(1.5f)},
                                           wire::Slot{false, false, kCells + 5, Bits(9.0f)},
                                           wire::Slot{true, false, 3, Bits(-0.5f)}};
  std::vector<std::uint8_t> bytes(wire::EncodedSize(3));
  ASSERT_EQ(wire::Encode(header, slots, bytes), bytes.size());
  ASSERT_EQ(Send(bytes, WorkerAddress(0)).size(), 1u);
  EXPECT_EQ(backend_->Counters().TotalDrops(), 0u);
  EXPECT_EQ(backend_->Counters()[Event::kValuesAggregated], 2u);
  for (int w = 1; w < kWorkers; ++w) SendData(w, 0, 0, {});
  for (int w = 0; w < kWorkers; ++w) SendFin(w, 0, 1);
  const auto result = SendCollect(0, 0, {{0, 2, 0}, {1, kCells - 1, 0}, {2, 3, 0}});
  ASSERT_EQ(result.size(), 1u);
  EXPECT_EQ(SumAt(result[0], 0), 1.5f);
  EXPECT_FALSE(Answered(result[0], 1));
  EXPECT_EQ(SumAt(result[0], 2), -0.5f);
}

// Many random packets (random holes, cells, magnitudes up to saturation)
// against a straightforward reference of the same fixed-point arithmetic.
TEST_P(ProgramTest, RandomEpochMatchesReferenceSums) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> coin(0, 3);
  std::uniform_int_distribution<std::uint32_t> cell(0, kCells - 1);
  std::uniform_real_distribution<float> small(-2.0f, 2.0f);
  ExpectSumsMatchReference([&](std::uint32_t seq) {
    std::vector<SlotValue> values;
    for (int j = 0; j < kSlots; ++j) {
      if (coin(rng) == 0) continue;  // a hole
      const float x = coin(rng) == 0 && seq % 7 == 0 ? 30000.0f : small(rng);
      values.push_back({j, cell(rng), x});
    }
    return values;
  });
  // Holes and scattered rows: (nearly) every packet takes the slot loop.
  EXPECT_LT(backend_->Counters()[Event::kDataOneRow],
            backend_->Counters()[Event::kDataPackets] / 10);
}

// Packets whose slots are all valid, on one row and in range (the aggregate
// stage's branch-free row loop), with sums that overflow now and then.
TEST_P(ProgramTest, RandomOneRowPacketsMatchReferenceSums) {
  std::mt19937 rng(12);
  std::uniform_int_distribution<int> coin(0, 2);
  std::uniform_int_distribution<std::uint32_t> cell(0, kCells - 1);
  std::uniform_real_distribution<float> small(-2.0f, 2.0f);
  std::uniform_real_distribution<float> large(9000.0f, 16000.0f);  // in range; sums overflow
  ExpectSumsMatchReference([&](std::uint32_t) {
    const std::uint32_t row = cell(rng);
    std::vector<SlotValue> values;
    for (int j = 0; j < kSlots; ++j)
      values.push_back({j, row, coin(rng) == 0 ? large(rng) : small(rng)});
    return values;
  });
  EXPECT_GT(backend_->Counters()[Event::kSaturatedCellUpdates], 0u);
  EXPECT_EQ(backend_->Counters()[Event::kValuesSaturated], 0u);  // the sums did, not the values
  EXPECT_EQ(backend_->Counters()[Event::kDataOneRow], backend_->Counters()[Event::kDataPackets]);
}

TEST_P(ProgramTest, UpdateIsReplicatedToEveryWorkerAndAckedToItsServer) {
  const std::vector<wire::CellValue> cells = {
      {0, 4, Bits(0.25f)}, {2, 4, Bits(-1.0f)}, {1, 8, Bits(3.0f)}};
  const std::vector<std::uint8_t> update = UpdatePacket(1, 3, 12, cells, wire::kFlagLast);
  const auto replicas = Send(update, ServerAddress(1));
  ASSERT_EQ(replicas.size(), static_cast<std::size_t>(kWorkers) + 1);
  const Reply& ack = replicas.back();
  EXPECT_EQ(ack.to, ServerAddress(1));
  EXPECT_EQ(ack.header().type, MessageType::kAck);
  EXPECT_EQ(ack.header().node_id, 1);
  EXPECT_EQ(ack.header().epoch, 3u);
  EXPECT_EQ(ack.header().seq, 12u);
  EXPECT_EQ(ack.header().slot_count, 0);
  EXPECT_EQ(ack.header().flags, 0) << "a first send's ACK";
  for (int w = 0; w < kWorkers; ++w) {
    const Reply& r = replicas[w];
    EXPECT_EQ(r.to, WorkerAddress(w));
    EXPECT_EQ(r.header().type, MessageType::kReplica);
    EXPECT_EQ(r.header().node_id, 1);
    EXPECT_EQ(r.header().epoch, 3u);
    EXPECT_EQ(r.header().seq, 12u);
    EXPECT_EQ(r.header().flags, wire::kFlagLast);
    // The payload goes out as it came: the row blocks are never rewritten.
    EXPECT_EQ(r.bytes.size(), update.size());
    EXPECT_TRUE(std::equal(r.bytes.begin() + 2, r.bytes.end(), update.begin() + 2));
    ASSERT_EQ(r.header().slot_count, 3);
    for (std::size_t i = 0; i < cells.size(); ++i) {
      EXPECT_EQ(r.message.cells[i].array, cells[i].array);
      EXPECT_EQ(r.message.cells[i].index, cells[i].index);
      EXPECT_EQ(r.message.cells[i].value, cells[i].value);
    }
  }

  // A resend is replicated and ACKed again, and its ACK says it answers a
  // resend (the server tells its sends apart by that).
  const auto again = Send(
      UpdatePacket(1, 3, 12, cells, wire::kFlagLast | wire::kFlagRetransmission), ServerAddress(1));
  ASSERT_EQ(again.size(), static_cast<std::size_t>(kWorkers) + 1);
  EXPECT_EQ(again.back().header().type, MessageType::kAck);
  EXPECT_EQ(again.back().header().flags, wire::kFlagRetransmission);
}

TEST_P(ProgramTest, AnUpdateWithBrokenRowBlocksIsDroppedAndCounted) {
  std::vector<std::uint8_t> update = UpdatePacket(1, 3, 0, {{0, 4, Bits(1.0f)}}, wire::kFlagLast);
  wire::StoreBig64(update.data() + wire::kHeaderBytes + wire::kRowBlockMaskAt, 0);  // empty mask
  EXPECT_TRUE(Send(update, ServerAddress(1)).empty());
  EXPECT_EQ(Drops(DropReason::kBadPayload), 1u);
  // An UPDATE's value count is not limited by the job's P slots.
  std::vector<wire::CellValue> many;
  for (std::uint32_t i = 0; i < 10 * kSlots; ++i) many.push_back({i % kSlots, i / kSlots, 0});
  EXPECT_EQ(Send(UpdatePacket(1, 3, 0, many, wire::kFlagLast), ServerAddress(1)).size(),
            static_cast<std::size_t>(kWorkers) + 1);
}

TEST_P(ProgramTest, ProbeIsAnsweredEvenWithoutAJob) {
  backend_->RemoveJob();
  EXPECT_TRUE(SendData(0, 0, 0, {{0, 0, 1.0f}}).empty());
  EXPECT_EQ(Drops(DropReason::kNoJob), 1u);
  const auto reply = Send(Packet(MessageType::kProbe, 0, 0, 42, {}, 0, 0), {0x7f000001, 9});
  ASSERT_EQ(reply.size(), 1u);
  EXPECT_EQ(reply[0].header().type, MessageType::kProbeReply);
  EXPECT_EQ(reply[0].header().seq, 42u);
  EXPECT_EQ(reply[0].to, (UdpEndpoint{0x7f000001, 9}));
}

TEST_P(ProgramTest, RefusedInstallKeepsTheRunningJob) {
  SwitchJob twice = MakeJob();
  twice.servers.push_back(WorkerAddress(0));
  const InstallResult refused = backend_->InstallJob(twice);
  EXPECT_FALSE(refused.ok);
  EXPECT_THAT(refused.error, ::testing::HasSubstr("appears twice"));
  SwitchJob huge = MakeJob();
  huge.cells_per_array = 1u << 24;
  EXPECT_FALSE(backend_->InstallJob(huge).ok);
  ASSERT_NE(backend_->job(), nullptr);
  EXPECT_EQ(SendData(0, 0, 0, {{0, 0, 1.0f}}).size(), 1u);
}

TEST_P(ProgramTest, ReinstallClearsRegisters) {
  RunEpoch(0, {{0, 0, 1.0f}});
  ASSERT_TRUE(backend_->InstallJob(MakeJob()).ok);
  RunEpoch(0, {{0, 0, 2.0f}});
  EXPECT_EQ(SumAt(SendCollect(0, 0, {{0, 0, 0}})[0], 0), 12.0f);
}

INSTANTIATE_TEST_SUITE_P(Backends, ProgramTest, ::testing::ValuesIn(testing::SwitchBackendNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace libra::dataplane
