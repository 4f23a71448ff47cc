#include "libra/wire.h"

#include <gtest/gtest.h>

#include <vector>

namespace libra::wire {
namespace {

TEST(WireTest, RoundTripsEveryField) {
  Header header;
  header.type = MessageType::kResult;
  header.flags = kFlagSaturated | kFlagRetransmission;
  header.job_id = 0xdeadbeef;
  header.node_id = 513;
  header.slot_count = 3;
  header.epoch = 0x01020304;
  header.seq = 77;
  const Slot slots[] = {
      {true, false, 5, 0x3f800000}, {false, false, 0, 0}, {true, true, kSlotIndexMask, 0xbf800000}};
  std::vector<std::uint8_t> bytes(EncodedSize(3));
  ASSERT_EQ(Encode(header, slots, bytes), bytes.size());

  Message message;
  ASSERT_EQ(Decode(bytes, &message), DecodeError::kNone);
  EXPECT_EQ(message.header.type, MessageType::kResult);
  EXPECT_EQ(message.header.flags, header.flags);
  EXPECT_EQ(message.header.job_id, header.job_id);
  EXPECT_EQ(message.header.node_id, 513);
  EXPECT_EQ(message.header.slot_count, 3);
  EXPECT_EQ(message.header.epoch, header.epoch);
  EXPECT_EQ(message.header.seq, 77u);
  for (int j = 0; j < 3; ++j) {
    EXPECT_EQ(message.slots[j].valid, slots[j].valid);
    EXPECT_EQ(message.slots[j].saturated, slots[j].saturated);
    EXPECT_EQ(message.slots[j].index, slots[j].index);
    EXPECT_EQ(message.slots[j].value, slots[j].value);
  }
}

TEST(WireTest, IsBigEndianOnTheWire) {
  Header header;
  header.type = MessageType::kData;
  header.job_id = 0x11223344;
  header.node_id = 0x5566;
  header.slot_count = 1;
  header.epoch = 0x01020304;
  header.seq = 0x0a0b0c0d;
  const Slot slot{true, false, 0x12345, 0x3f800000};
  std::vector<std::uint8_t> bytes(EncodedSize(1));
  ASSERT_EQ(Encode(header, {&slot, 1}, bytes), bytes.size());
  const std::vector<std::uint8_t> expected = {
      2,    1,    0,    0,    0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0,    1,    0x01, 0x02,
      0x03, 0x04, 0x0a, 0x0b, 0x0c, 0x0d, 0x80, 0x01, 0x23, 0x45, 0x3f, 0x80, 0x00, 0x00};
  EXPECT_EQ(bytes, expected);
}

TEST(WireTest, RejectsMalformedBuffersWithAReason) {
  Header header;
  header.slot_count = 2;
  const Slot slots[2] = {};
  std::vector<std::uint8_t> bytes(EncodedSize(2));
  ASSERT_EQ(Encode(header, slots, bytes), bytes.size());
  Message message;

  for (std::size_t length = 0; length < bytes.size(); ++length) {
    EXPECT_EQ(Decode({bytes.data(), length}, &message), DecodeError::kTruncated) << length;
  }
  std::vector<std::uint8_t> longer = bytes;
  longer.push_back(0);
  EXPECT_EQ(Decode(longer, &message), DecodeError::kOversized);

  std::vector<std::uint8_t> bad = bytes;
  bad[0] = 1;  // version 1 (before compacted RESULTs) is not understood
  EXPECT_EQ(Decode(bad, &message), DecodeError::kBadVersion);
  bad = bytes;
  bad[1] = 0;
  EXPECT_EQ(Decode(bad, &message), DecodeError::kUnknownType);
  bad[1] = kLastMessageType + 1;
  EXPECT_EQ(Decode(bad, &message), DecodeError::kUnknownType);
  bad = bytes;
  StoreBig16(bad.data() + 10, kMaxSlots + 1);
  EXPECT_EQ(Decode(bad, &message), DecodeError::kTooManySlots);
}

TEST(WireTest, EncodeRefusesTooSmallBuffersAndTooManySlots) {
  Header header;
  header.slot_count = 2;
  const Slot slots[2] = {};
  std::vector<std::uint8_t> small(EncodedSize(2) - 1);
  EXPECT_EQ(Encode(header, slots, small), 0u);
  std::vector<std::uint8_t> big(kMaxMessageBytes + 64);
  header.slot_count = kMaxSlots + 1;
  EXPECT_EQ(Encode(header, slots, big), 0u);
}

}  // namespace
}  // namespace libra::wire
