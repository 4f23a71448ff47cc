#include "wire/wire.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace libra::wire {
namespace {

Header HeaderOf(MessageType type, std::uint16_t slot_count, std::uint16_t flags = 0) {
  Header header;
  header.type = type;
  header.flags = flags;
  header.job_id = 0xdeadbeef;
  header.node_id = 513;
  header.slot_count = slot_count;
  header.epoch = 0x01020304;
  header.seq = 77;
  return header;
}

void ExpectSameHeader(const Header& decoded, const Header& sent) {
  EXPECT_EQ(decoded.version, kVersion);
  EXPECT_EQ(decoded.type, sent.type);
  EXPECT_EQ(decoded.flags, sent.flags);
  EXPECT_EQ(decoded.job_id, sent.job_id);
  EXPECT_EQ(decoded.node_id, sent.node_id);
  EXPECT_EQ(decoded.slot_count, sent.slot_count);
  EXPECT_EQ(decoded.epoch, sent.epoch);
  EXPECT_EQ(decoded.seq, sent.seq);
}

// The byte layout of docs/protocol.md, spelled out: a change here is a wire
// version change.
TEST(WireTest, TheHeaderAndASlotAreLaidOutAsTheProtocolDraws) {
  const Header header = HeaderOf(MessageType::kCollect, 1, kFlagRow);
  const Slot slot{true, false, 0x123456, 0x3f800000};
  std::vector<std::uint8_t> bytes(EncodedSize(1));
  ASSERT_EQ(Encode(header, {&slot, 1}, bytes), bytes.size());
  const std::vector<std::uint8_t> expected = {
      kVersion, 5,    0x00, 0x40, 0xde, 0xad, 0xbe, 0xef, 0x02, 0x01,  // version .. node_id
      0x00,     0x01, 0x01, 0x02, 0x03, 0x04, 0x00, 0x00, 0x00, 77,    // slot_count .. seq
      0x80,     0x12, 0x34, 0x56, 0x3f, 0x80, 0x00, 0x00};             // V | cell, value
  EXPECT_EQ(bytes, expected);
  EXPECT_EQ(SlotCountOf(bytes.data()), 1);
  EXPECT_EQ(SeqOf(bytes.data()), 77u);
  const std::uint64_t word = LoadSlotWord(bytes.data() + kHeaderBytes);
  EXPECT_EQ(SlotKeyWord(word), 0x80123456u);
  EXPECT_EQ(SlotValueWord(word), 0x3f800000u);
  EXPECT_EQ(SlotValidBitOf(SlotKeyWord(word)), 1u);
}

TEST(WireTest, FieldsRewrittenInPlaceDecodeAsSet) {
  std::vector<std::uint8_t> bytes(EncodedSize(0));
  ASSERT_EQ(Encode(HeaderOf(MessageType::kData, 0), {}, bytes), bytes.size());
  SetType(bytes.data(), MessageType::kAck);
  SetFlags(bytes.data(), kFlagDuplicate);
  SetEpoch(bytes.data(), 9);
  SetSeq(bytes.data(), 10);
  Header decoded;
  ASSERT_EQ(DecodeHeader(bytes, &decoded), DecodeError::kNone);
  EXPECT_EQ(decoded.type, MessageType::kAck);
  EXPECT_EQ(decoded.flags, kFlagDuplicate);
  EXPECT_EQ(decoded.epoch, 9u);
  EXPECT_EQ(decoded.seq, 10u);
  SetSlotCount(bytes.data(), 1);
  EXPECT_EQ(DecodeHeader(bytes, &decoded), DecodeError::kTruncated);
}

TEST(WireTest, AnUpdateTakesTheCellsThatFitItsSize) {
  // One row of many arrays is one block: kMaxUpdateValues values fit.
  std::vector<CellValue> one_row(kMaxUpdateValues + 5);
  for (std::size_t i = 0; i < one_row.size(); ++i) {
    one_row[i] = CellValue{static_cast<std::uint32_t>(i % kMaxSlots),
                           static_cast<std::uint32_t>(i / kMaxSlots), 0};
  }
  const std::size_t fit = UpdateCellsThatFit(one_row);
  EXPECT_LE(UpdateSize(std::span<const CellValue>(one_row).first(fit)), kMaxMessageBytes);
  EXPECT_GT(UpdateSize(std::span<const CellValue>(one_row).first(fit + 1)), kMaxMessageBytes);
  // A row each: 16 bytes a value, in what the header and the tag leave.
  std::vector<CellValue> rows(100);
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = CellValue{0, std::uint32_t(i), 0};
  EXPECT_EQ(UpdateCellsThatFit(rows), (kMaxMessageBytes - kHeaderBytes - kUpdateTagBytes) /
                                          (kRowBlockHeaderBytes + kValueBytes));
  EXPECT_EQ(UpdateCellsThatFit({}), 0u);
}

TEST(WireTest, RoundTripsEveryFieldOfASlotMessage) {
  const Header header = HeaderOf(MessageType::kData, 3, kFlagRetransmission);
  const Slot slots[] = {{true, false, 5, 0x3f800000},
                        {false, false, 0, 0},
                        {true, false, kSlotIndexMask, 0xbf800000}};
  std::vector<std::uint8_t> bytes(EncodedSize(3));
  ASSERT_EQ(Encode(header, slots, bytes), bytes.size());

  Message message;
  ASSERT_EQ(Decode(bytes, &message), DecodeError::kNone);
  ExpectSameHeader(message.header, header);
  for (int j = 0; j < 3; ++j) {
    EXPECT_EQ(message.slots[j].valid, slots[j].valid);
    EXPECT_EQ(message.slots[j].index, slots[j].index);
    EXPECT_EQ(message.slots[j].value, slots[j].value);
  }
}

TEST(WireTest, IsBigEndianOnTheWire) {
  Header header = HeaderOf(MessageType::kData, 1);
  header.job_id = 0x11223344;
  header.node_id = 0x5566;
  header.seq = 0x0a0b0c0d;
  const Slot slot{true, false, 0x12345, 0x3f800000};
  std::vector<std::uint8_t> bytes(EncodedSize(1));
  ASSERT_EQ(Encode(header, {&slot, 1}, bytes), bytes.size());
  const std::vector<std::uint8_t> expected = {
      kVersion, 1,    0,    0,    0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0,    1,    0x01, 0x02,
      0x03,     0x04, 0x0a, 0x0b, 0x0c, 0x0d, 0x80, 0x01, 0x23, 0x45, 0x3f, 0x80, 0x00, 0x00};
  EXPECT_EQ(bytes, expected);
}

TEST(WireTest, AResultIsAWrittenMaskAndFourByteValues) {
  // Values answering COLLECT slots 1 and 33.
  const Slot slots[] = {{true, false, 1, 0x3f800000}, {true, false, 33, 0x40000000}};
  std::vector<std::uint8_t> bytes(kMaxMessageBytes);
  const std::size_t size = Encode(HeaderOf(MessageType::kResult, 2), slots, bytes);
  ASSERT_EQ(size, ResultSize(2, false));
  ASSERT_EQ(size, kHeaderBytes + 8 + 2 * 4);
  const std::vector<std::uint8_t> payload(bytes.begin() + kHeaderBytes, bytes.begin() + size);
  const std::vector<std::uint8_t> expected = {0,    0,    0, 2, 0,    0, 0, 2,  // bits 33 and 1
                                              0x3f, 0x80, 0, 0, 0x40, 0, 0, 0};
  EXPECT_EQ(payload, expected);

  Message message;
  ASSERT_EQ(Decode({bytes.data(), size}, &message), DecodeError::kNone);
  ExpectSameHeader(message.header, HeaderOf(MessageType::kResult, 2));
  EXPECT_TRUE(message.slots[0].valid);
  EXPECT_EQ(message.slots[0].index, 1u);
  EXPECT_EQ(message.slots[0].value, 0x3f800000u);
  EXPECT_EQ(message.slots[1].index, 33u);
  EXPECT_EQ(message.slots[1].value, 0x40000000u);
  EXPECT_FALSE(message.slots[0].saturated || message.slots[1].saturated);
}

TEST(WireTest, ASaturatedResultCarriesTheSaturatedMaskAndFlag) {
  const Slot slots[] = {{true, false, 0, 1}, {true, true, 63, 2}};
  std::vector<std::uint8_t> bytes(kMaxMessageBytes);
  const std::size_t size = Encode(HeaderOf(MessageType::kResult, 2), slots, bytes);
  ASSERT_EQ(size, ResultSize(2, true));
  Message message;
  ASSERT_EQ(Decode({bytes.data(), size}, &message), DecodeError::kNone);
  EXPECT_EQ(message.header.flags & kFlagSaturated, kFlagSaturated);
  EXPECT_FALSE(message.slots[0].saturated);
  EXPECT_TRUE(message.slots[1].saturated);
  EXPECT_EQ(message.slots[1].index, 63u);
  EXPECT_EQ(message.slots[1].value, 2u);
}

TEST(WireTest, AnEmptyResultIsTheHeaderAlone) {
  std::vector<std::uint8_t> bytes(kMaxMessageBytes);
  const std::size_t size =
      Encode(HeaderOf(MessageType::kResult, 0, kFlagNotReady), std::span<const Slot>{}, bytes);
  ASSERT_EQ(size, kHeaderBytes);
  Message message;
  EXPECT_EQ(Decode({bytes.data(), size}, &message), DecodeError::kNone);
}

TEST(WireTest, ResultSlotsOutOfOrderOrInvalidAreNotEncoded) {
  std::vector<std::uint8_t> bytes(kMaxMessageBytes);
  const Slot unordered[] = {{true, false, 4, 0}, {true, false, 4, 0}};
  EXPECT_EQ(Encode(HeaderOf(MessageType::kResult, 2), unordered, bytes), 0u);
  const Slot invalid[] = {{false, false, 4, 0}};
  EXPECT_EQ(Encode(HeaderOf(MessageType::kResult, 1), invalid, bytes), 0u);
  const Slot too_far[] = {{true, false, kMaxSlots, 0}};
  EXPECT_EQ(Encode(HeaderOf(MessageType::kResult, 1), too_far, bytes), 0u);
}

TEST(WireTest, AResultWhoseMaskDisagreesWithItsCountIsABadPayload) {
  const Slot slots[] = {{true, false, 0, 1}, {true, true, 5, 2}};
  std::vector<std::uint8_t> bytes(kMaxMessageBytes);
  const std::size_t size = Encode(HeaderOf(MessageType::kResult, 2), slots, bytes);
  bytes.resize(size);
  Message message;
  std::vector<std::uint8_t> bad = bytes;
  bad[kHeaderBytes + 7] |= 0x80;  // a third written bit for two values
  EXPECT_EQ(Decode(bad, &message), DecodeError::kBadPayload);
  bad = bytes;
  bad[kHeaderBytes + 8 + 7] |= 0x02;  // saturated but not written
  EXPECT_EQ(Decode(bad, &message), DecodeError::kBadPayload);
  bad = bytes;
  SetFlags(bad.data(), 0);  // no SATURATED flag: the saturated mask is one too many
  EXPECT_EQ(Decode(bad, &message), DecodeError::kOversized);
}

TEST(WireTest, AnUpdateIsRowBlocks) {
  const CellValue cells[] = {{0, 7, 0x3f800000}, {2, 7, 0x40000000}, {1, 9, 0x40400000}};
  std::vector<std::uint8_t> bytes(kMaxMessageBytes);
  Header header = HeaderOf(MessageType::kUpdate, 0, kFlagLast);
  std::fill(bytes.begin(), bytes.end(), 0xee);
  const std::size_t size = EncodeUpdate(header, cells, bytes);
  ASSERT_EQ(size, UpdateSize(cells));
  ASSERT_EQ(size, kHeaderBytes + 2 * kRowBlockHeaderBytes + 3 * kValueBytes + kUpdateTagBytes);
  ASSERT_EQ(UpdateTagAt(size), size - 16);
  const std::vector<std::uint8_t> payload(bytes.begin() + kHeaderBytes, bytes.begin() + size);
  const std::vector<std::uint8_t> expected = {
      0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 5, 0x3f, 0x80, 0, 0, 0x40, 0, 0, 0,  // row 7: arrays 0, 2
      0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 2, 0x40, 0x40, 0, 0,                 // row 9: array 1
      0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,    0,    0, 0};                // the tag, unsigned
  EXPECT_EQ(payload, expected);

  Message message;
  ASSERT_EQ(Decode({bytes.data(), size}, &message), DecodeError::kNone);
  header.slot_count = 3;
  ExpectSameHeader(message.header, header);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(message.cells[i].array, cells[i].array);
    EXPECT_EQ(message.cells[i].index, cells[i].index);
    EXPECT_EQ(message.cells[i].value, cells[i].value);
  }
  // The switch rewrites the type only: a REPLICA decodes the same way.
  SetType(bytes.data(), MessageType::kReplica);
  ASSERT_EQ(Decode({bytes.data(), size}, &message), DecodeError::kNone);
  EXPECT_EQ(message.cells[2].index, 9u);
  // The tag is not the decoder's to check (the switch has no key).
  bytes[UpdateTagAt(size)] = 0x5a;
  EXPECT_EQ(Decode({bytes.data(), size}, &message), DecodeError::kNone);
}

TEST(WireTest, AnEmptyUpdateIsTheHeaderAndTheTag) {
  std::vector<std::uint8_t> bytes(kMaxMessageBytes);
  const std::size_t size = EncodeUpdate(HeaderOf(MessageType::kUpdate, 0, kFlagLast), {}, bytes);
  EXPECT_EQ(size, kHeaderBytes + kUpdateTagBytes);
  Message message;
  EXPECT_EQ(Decode({bytes.data(), size}, &message), DecodeError::kNone);
  EXPECT_EQ(message.header.slot_count, 0u);
  // Without its tag an UPDATE is short, whatever its blocks say.
  EXPECT_EQ(Decode({bytes.data(), kHeaderBytes}, &message), DecodeError::kTruncated);
  EXPECT_EQ(Decode({bytes.data(), size - 1}, &message), DecodeError::kTruncated);
}

TEST(WireTest, UpdateCellsMustBeSortedByRowThenArray) {
  std::vector<std::uint8_t> bytes(kMaxMessageBytes);
  const Header header = HeaderOf(MessageType::kUpdate, 0);
  const CellValue rows_down[] = {{0, 9, 0}, {0, 7, 0}};
  EXPECT_EQ(EncodeUpdate(header, rows_down, bytes), 0u);
  const CellValue arrays_down[] = {{2, 7, 0}, {1, 7, 0}};
  EXPECT_EQ(EncodeUpdate(header, arrays_down, bytes), 0u);
  const CellValue no_such_array[] = {{kMaxSlots, 7, 0}};
  EXPECT_EQ(EncodeUpdate(header, no_such_array, bytes), 0u);
  const std::vector<CellValue> too_many(kMaxUpdateValues + 1);
  EXPECT_EQ(EncodeUpdate(header, too_many, bytes), 0u);
  // A full packet: a row holds at most 64 values, so two blocks and the tag
  // take 118 values (532 bytes) and not one more.
  std::vector<CellValue> full;
  for (std::uint32_t i = 0; i < 118; ++i) full.push_back({i % 64, i / 64, i});
  EXPECT_EQ(EncodeUpdate(header, full, bytes), kMaxMessageBytes);
  full.push_back({55, 1, 0});
  EXPECT_EQ(EncodeUpdate(header, full, bytes), 0u);
  EXPECT_EQ(EncodeUpdate(HeaderOf(MessageType::kData, 0), full, bytes), 0u);
}

TEST(WireTest, MalformedRowBlocksAreRejectedWithAReason) {
  const CellValue cells[] = {{0, 7, 1}, {3, 7, 2}};
  std::vector<std::uint8_t> bytes(kMaxMessageBytes);
  const std::size_t size = EncodeUpdate(HeaderOf(MessageType::kUpdate, 0), cells, bytes);
  bytes.resize(size);
  Message message;
  for (std::size_t length = kHeaderBytes + 1; length < size; ++length) {
    EXPECT_EQ(Decode({bytes.data(), length}, &message), DecodeError::kTruncated) << length;
  }
  std::vector<std::uint8_t> bad = bytes;
  SetSlotCount(bad.data(), 1);  // the block holds two values
  EXPECT_EQ(Decode(bad, &message), DecodeError::kOversized);
  bad = bytes;
  SetSlotCount(bad.data(), 3);
  EXPECT_EQ(Decode(bad, &message), DecodeError::kTruncated);
  bad = bytes;
  StoreBig32(bad.data() + kHeaderBytes, kSlotIndexMask + 1);  // no such row
  EXPECT_EQ(Decode(bad, &message), DecodeError::kBadPayload);
  bad = bytes;
  StoreBig64(bad.data() + kHeaderBytes + kRowBlockMaskAt, 0);  // empty mask
  EXPECT_EQ(Decode(bad, &message), DecodeError::kBadPayload);
  bad = bytes;
  SetSlotCount(bad.data(), kMaxUpdateValues + 1);
  EXPECT_EQ(Decode(bad, &message), DecodeError::kTooManySlots);
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
  bad[kVersionAt] = 2;  // version 2 (8-byte slots in RESULT and UPDATE) is not understood
  EXPECT_EQ(Decode(bad, &message), DecodeError::kBadVersion);
  bad = bytes;
  bad[kTypeAt] = 0;
  EXPECT_EQ(Decode(bad, &message), DecodeError::kUnknownType);
  bad[kTypeAt] = kLastMessageType + 1;
  EXPECT_EQ(Decode(bad, &message), DecodeError::kUnknownType);
  bad = bytes;
  SetSlotCount(bad.data(), kMaxSlots + 1);
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
  header.type = MessageType::kUpdate;  // row blocks have their own encoder
  header.slot_count = 1;
  EXPECT_EQ(Encode(header, slots, big), 0u);
}

}  // namespace
}  // namespace libra::wire
