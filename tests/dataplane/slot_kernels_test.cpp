// The data path's per-slot loops (src/dataplane/slot_loops.h) run in blocks
// of eight slots, vectorised, plus a remainder loop. These tests drive every
// slot count through the parse, admit and convert stages and compare each
// slot with the scalar definition, and run whole epochs at P = 13 and P = 32
// (blocks and remainder) against a reference of the same fixed-point
// arithmetic. (The program tests use P = 4: the remainder loop only.)
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <vector>

#include "common/result_slots.h"
#include "dataplane/program.h"
#include "dataplane/stages.h"

namespace libra::dataplane {
namespace {

std::uint32_t Bits(float x) { return std::bit_cast<std::uint32_t>(x); }

// A float of every kind: any exponent (zero, denormal, normal, Inf/NaN),
// random mantissa and sign.
std::uint32_t AnyFloatBits(std::mt19937& rng) { return static_cast<std::uint32_t>(rng()); }

std::vector<std::uint8_t> DataPacket(std::uint16_t node, std::uint32_t epoch, std::uint32_t seq,
                                     std::span<const wire::Slot> slots) {
  wire::Header header;
  header.type = wire::MessageType::kData;
  header.job_id = 1;
  header.node_id = node;
  header.epoch = epoch;
  header.seq = seq;
  header.slot_count = static_cast<std::uint16_t>(slots.size());
  std::vector<std::uint8_t> bytes(wire::EncodedSize(slots.size()));
  EXPECT_EQ(wire::Encode(header, slots, bytes), bytes.size());
  return bytes;
}

UdpEndpoint Worker(int w) { return {0x0a000001u + static_cast<std::uint32_t>(w), 4000}; }
UdpEndpoint Server() { return {0x0a000100u, 5000}; }

SwitchJob Job(int workers, int slots_per_packet, std::uint32_t cells, int scale_bits) {
  SwitchJob job;
  job.job_id = 1;
  job.token = "t";
  for (int w = 0; w < workers; ++w) job.workers.push_back(Worker(w));
  job.servers.push_back(Server());
  job.cells_per_array = cells;
  job.slots_per_packet = slots_per_packet;
  job.scale_bits = scale_bits;
  return job;
}

TEST(SlotKernelsTest, ParseAndAdmitMatchTheWireFormatAtEverySlotCount) {
  std::mt19937 rng(5);
  PipelineState state;
  for (std::size_t count = 1; count <= wire::kMaxSlots; ++count) {
    for (int round = 0; round < 20; ++round) {
      std::vector<wire::Slot> slots(count);
      std::uint64_t valid = 0;
      for (std::size_t j = 0; j < count; ++j) {
        slots[j].valid = rng() % 4 != 0;
        slots[j].index = static_cast<std::uint32_t>(rng()) & wire::kSlotIndexMask;
        slots[j].value = static_cast<std::uint32_t>(rng());
        valid |= std::uint64_t{slots[j].valid} << j;
      }
      const std::vector<std::uint8_t> bytes = DataPacket(0, 0, 0, slots);
      PacketContext ctx;
      ASSERT_TRUE(ParseStage(bytes, ctx, state));
      ASSERT_EQ(ctx.valid_slots, valid) << count;
      for (std::size_t j = 0; j < count; ++j) {
        ASSERT_EQ(ctx.index[j], slots[j].index) << count << " slot " << j;
        ASSERT_EQ(ctx.value[j], slots[j].value) << count << " slot " << j;
      }
    }
  }
}

TEST(SlotKernelsTest, AdmitDropsExactlyThePacketsWithAValidSlotOutOfRange) {
  constexpr int kSlots = 32;
  constexpr std::uint32_t kCells = 50;
  Program program;
  ASSERT_TRUE(program.InstallJob(Job(1, kSlots, kCells, 16)).ok);
  std::mt19937 rng(3);
  std::uint32_t seq = 0;
  std::uint64_t expected_drops = 0;
  for (std::size_t count = 1; count <= kSlots; ++count) {
    for (int round = 0; round < 10; ++round) {
      std::vector<wire::Slot> slots(count);
      bool out_of_range = false;
      for (std::size_t j = 0; j < count; ++j) {
        slots[j].valid = rng() % 3 != 0;
        slots[j].index = rng() % 8 == 0 ? kCells + rng() % 100 : rng() % kCells;
        slots[j].value = Bits(0.25f);
        out_of_range |= slots[j].valid && slots[j].index >= kCells;
      }
      OutputBatch out;
      program.Process(DataPacket(0, 0, seq, slots), Worker(0), out);
      if (out_of_range) {
        ++expected_drops;
        EXPECT_TRUE(out.empty()) << count;
      } else {
        EXPECT_EQ(out.size(), 1u) << count;
        ++seq;
      }
      ASSERT_EQ(program.counters()[DropReason::kCellIndexOutOfRange], expected_drops);
    }
  }
  EXPECT_GT(expected_drops, 0u);
  EXPECT_EQ(program.counters().TotalDrops(), expected_drops);
}

TEST(SlotKernelsTest, ConvertMatchesTheScalarTableLookupAtEverySlotCount) {
  std::mt19937 rng(9);
  for (const int scale_bits : {0, 8, 16, 24, 30}) {
    PipelineState state;
    state.codec.emplace(scale_bits);
    const FixedPointCodec& codec = *state.codec;
    for (std::size_t count = 1; count <= wire::kMaxSlots; ++count) {
      for (int round = 0; round < 40; ++round) {
        PacketContext ctx;
        ctx.header.slot_count = static_cast<std::uint16_t>(count);
        ctx.valid_slots = 0;
        for (std::size_t j = 0; j < count; ++j) {
          ctx.value[j] = AnyFloatBits(rng);
          if (rng() % 8 != 0) ctx.valid_slots |= std::uint64_t{1} << j;
        }
        ConvertStage(ctx, state);
        bool all_ok = true;
        for (std::size_t j = 0; j < count; ++j) {
          const FixedValue expected = codec.ToFixed(ctx.value[j]);
          ASSERT_EQ(ctx.fixed[j], expected.value) << "F=" << scale_bits << " count " << count
                                                  << " slot " << j << " bits " << ctx.value[j];
          if (((ctx.valid_slots >> j) & 1) == 0) continue;
          all_ok &= expected.status == ConversionStatus::kOk;
        }
        ASSERT_EQ(ctx.all_values_ok, all_ok);
        if (!all_ok) {
          for (std::size_t j = 0; j < count; ++j) {
            if (((ctx.valid_slots >> j) & 1) == 0) continue;
            ASSERT_EQ(ctx.status[j], codec.ToFixed(ctx.value[j]).status);
          }
        }
      }
    }
  }
}

TEST(SlotKernelsTest, ConvertCountsOnlyValidSlotsThatDidNotConvert) {
  PipelineState state;
  state.codec.emplace(16);
  PacketContext ctx;
  ctx.header.slot_count = 12;
  for (std::size_t j = 0; j < 12; ++j) ctx.value[j] = Bits(0.5f);
  ctx.value[3] = Bits(std::numeric_limits<float>::quiet_NaN());  // invalid slot: ignored
  ctx.value[9] = Bits(std::numeric_limits<float>::infinity());   // valid: rejected
  ctx.value[10] = Bits(1e9f);                                    // valid: saturated
  ctx.valid_slots = 0xfff & ~(std::uint64_t{1} << 3);
  ConvertStage(ctx, state);
  EXPECT_FALSE(ctx.all_values_ok);
  EXPECT_EQ(ctx.status[9], ConversionStatus::kRejected);
  EXPECT_EQ(ctx.status[10], ConversionStatus::kSaturated);
  EXPECT_EQ(ctx.status[0], ConversionStatus::kOk);
  EXPECT_EQ(state.counters[Event::kValuesRejected], 1u);
  EXPECT_EQ(state.counters[Event::kValuesSaturated], 1u);

  // Only the invalid slot is unusual: the packet counts as clean.
  ctx.header.slot_count = 9;
  ctx.valid_slots = 0x1ff & ~(std::uint64_t{1} << 3);
  ConvertStage(ctx, state);
  EXPECT_TRUE(ctx.all_values_ok);
  EXPECT_EQ(state.counters[Event::kValuesRejected], 1u);
}

// Whole epochs through the program at slot counts that use the vectorised
// blocks (32) and blocks plus remainder (13), with holes, values of every
// magnitude up to saturation, and now and then NaN or infinity.
class WideProgramTest : public ::testing::TestWithParam<int> {};

TEST_P(WideProgramTest, EpochsMatchReferenceSums) {
  const int slots_per_packet = GetParam();
  constexpr int kWorkers = 4;
  constexpr std::uint32_t kCells = 24;
  constexpr int kScale = 12;
  Program program;
  ASSERT_TRUE(program.InstallJob(Job(kWorkers, slots_per_packet, kCells, kScale)).ok);
  const FixedPointCodec codec(kScale);
  std::mt19937 rng(static_cast<unsigned>(slots_per_packet));
  std::uniform_real_distribution<float> small(-3.0f, 3.0f);

  for (std::uint32_t epoch = 0; epoch < 4; ++epoch) {
    std::map<std::pair<int, std::uint32_t>, std::int32_t> sums;
    std::map<std::pair<int, std::uint32_t>, bool> flagged;
    constexpr std::uint32_t kPackets = 12;
    OutputBatch out;
    for (std::uint32_t seq = 0; seq < kPackets; ++seq) {
      for (int w = 0; w < kWorkers; ++w) {
        std::vector<wire::Slot> slots(static_cast<std::size_t>(slots_per_packet));
        for (int j = 0; j < slots_per_packet; ++j) {
          wire::Slot& slot = slots[static_cast<std::size_t>(j)];
          slot.valid = rng() % 5 != 0;
          slot.index = static_cast<std::uint32_t>(rng() % kCells);
          const unsigned kind = rng() % 64;
          slot.value = kind == 0   ? Bits(std::numeric_limits<float>::quiet_NaN())
                       : kind == 1 ? Bits(-std::numeric_limits<float>::infinity())
                       : kind < 4  ? Bits(small(rng) * 200000.0f)  // saturates at F = 12
                                   : Bits(small(rng));
          if (!slot.valid) continue;
          const auto key = std::make_pair(j, slot.index);
          const FixedValue fixed = codec.ToFixed(slot.value);
          if (fixed.status != ConversionStatus::kOk) flagged[key] = true;
          if (fixed.status == ConversionStatus::kRejected) {
            sums.try_emplace(key, 0);
            continue;
          }
          const SaturatingSum sum = SaturatingAdd(sums[key], fixed.value);
          sums[key] = sum.value;
          if (sum.saturated) flagged[key] = true;
        }
        out.Clear();
        program.Process(DataPacket(static_cast<std::uint16_t>(w), epoch, seq, slots), Worker(w),
                        out);
        ASSERT_EQ(out.size(), 1u);  // the ACK
      }
    }
    ASSERT_EQ(program.counters().TotalDrops(), 0u);
    for (int w = 0; w < kWorkers; ++w) {
      wire::Header fin;
      fin.type = wire::MessageType::kFin;
      fin.job_id = 1;
      fin.node_id = static_cast<std::uint16_t>(w);
      fin.epoch = epoch;
      fin.seq = kPackets;
      std::vector<std::uint8_t> bytes(wire::kHeaderBytes);
      wire::Encode(fin, {}, bytes);
      out.Clear();
      program.Process(bytes, Worker(w), out);
    }
    for (std::uint32_t i = 0; i < kCells; ++i) {
      std::vector<wire::Slot> ask(static_cast<std::size_t>(slots_per_packet),
                                  wire::Slot{true, false, i, 0});
      wire::Header collect;
      collect.type = wire::MessageType::kCollect;
      collect.job_id = 1;
      collect.epoch = epoch;
      collect.slot_count = static_cast<std::uint16_t>(slots_per_packet);
      std::vector<std::uint8_t> bytes(wire::EncodedSize(ask.size()));
      wire::Encode(collect, ask, bytes);
      out.Clear();
      program.Process(bytes, Server(), out);
      ASSERT_EQ(out.size(), 1u);
      wire::Message result;
      ASSERT_EQ(wire::Decode(out[0].payload(), &result), wire::DecodeError::kNone);
      ASSERT_EQ(result.header.type, wire::MessageType::kResult);
      const auto by_slot = libra::testing::ResultBySlot(result);
      for (int j = 0; j < slots_per_packet; ++j) {
        const auto key = std::make_pair(j, i);
        const auto sum = sums.find(key);
        const std::int32_t expected = sum == sums.end() ? 0 : sum->second;
        ASSERT_EQ(by_slot[static_cast<std::size_t>(j)].valid, sum != sums.end())
            << "epoch " << epoch << " array " << j << " cell " << i;
        ASSERT_EQ(static_cast<std::int32_t>(by_slot[static_cast<std::size_t>(j)].value), expected)
            << "epoch " << epoch << " array " << j << " cell " << i;
        ASSERT_EQ(by_slot[static_cast<std::size_t>(j)].saturated, flagged.count(key) != 0)
            << "epoch " << epoch << " array " << j << " cell " << i;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(SlotCounts, WideProgramTest, ::testing::Values(13, 32));

}  // namespace
}  // namespace libra::dataplane
