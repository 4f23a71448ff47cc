#include "wire/wire.h"

#include <bit>
#include <cstring>

namespace libra::wire {

std::string_view MessageTypeName(MessageType type) {
  switch (type) {
    case MessageType::kData:
      return "DATA";
    case MessageType::kAck:
      return "ACK";
    case MessageType::kFin:
      return "FIN";
    case MessageType::kReady:
      return "READY";
    case MessageType::kCollect:
      return "COLLECT";
    case MessageType::kResult:
      return "RESULT";
    case MessageType::kUpdate:
      return "UPDATE";
    case MessageType::kReplica:
      return "REPLICA";
    case MessageType::kProbe:
      return "PROBE";
    case MessageType::kProbeReply:
      return "PROBE_REPLY";
  }
  return "UNKNOWN";
}

std::string_view DecodeErrorName(DecodeError error) {
  switch (error) {
    case DecodeError::kNone:
      return "none";
    case DecodeError::kTruncated:
      return "truncated";
    case DecodeError::kOversized:
      return "oversized";
    case DecodeError::kBadVersion:
      return "bad_version";
    case DecodeError::kUnknownType:
      return "unknown_type";
    case DecodeError::kTooManySlots:
      return "too_many_slots";
    case DecodeError::kBadPayload:
      return "bad_payload";
  }
  return "unknown";
}

Payload PayloadOf(MessageType type) {
  switch (type) {
    case MessageType::kResult:
      return Payload::kResult;
    case MessageType::kUpdate:
    case MessageType::kReplica:
      return Payload::kRowBlocks;
    default:
      return Payload::kSlots;
  }
}

namespace {

void StoreHeader(const Header& header, std::uint8_t* p) {
  p[kVersionAt] = header.version;
  p[kTypeAt] = static_cast<std::uint8_t>(header.type);
  StoreBig16(p + kFlagsAt, header.flags);
  StoreBig32(p + kJobIdAt, header.job_id);
  StoreBig16(p + kNodeIdAt, header.node_id);
  StoreBig16(p + kSlotCountAt, header.slot_count);
  StoreBig32(p + kEpochAt, header.epoch);
  StoreBig32(p + kSeqAt, header.seq);
}

// The bytes cell i of sorted UPDATE cells adds: its value, and a row block
// header when it starts a row.
std::size_t UpdateBytesOf(std::span<const CellValue> cells, std::size_t i) {
  const bool new_row = i == 0 || cells[i].index != cells[i - 1].index;
  return (new_row ? kRowBlockHeaderBytes : 0) + kValueBytes;
}

std::size_t EncodeSlots(const Header& header, std::span<const Slot> slots,
                        std::span<std::uint8_t> out) {
  const std::size_t count = header.slot_count;
  if (count > kMaxSlots || count > slots.size() || out.size() < EncodedSize(count)) return 0;
  StoreHeader(header, out.data());
  std::uint8_t* p = out.data() + kHeaderBytes;
  for (std::size_t j = 0; j < count; ++j, p += kSlotBytes) {
    StoreBig32(p, PackSlotKey(slots[j]));
    StoreBig32(p + kSlotValueAt, slots[j].value);
  }
  return EncodedSize(count);
}

std::size_t EncodeResult(const Header& header, std::span<const Slot> slots,
                         std::span<std::uint8_t> out) {
  const std::size_t count = header.slot_count;
  if (count > kMaxSlots || count > slots.size()) return 0;
  std::uint64_t written = 0;
  std::uint64_t saturated = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const Slot& slot = slots[i];
    const bool in_order = i == 0 || slot.index > slots[i - 1].index;
    if (!slot.valid || slot.index >= kMaxSlots || !in_order) return 0;
    written |= std::uint64_t{1} << slot.index;
    if (slot.saturated) saturated |= std::uint64_t{1} << slot.index;
  }
  Header with_flags = header;
  if (saturated != 0) with_flags.flags |= kFlagSaturated;
  const bool saturated_mask = count > 0 && (with_flags.flags & kFlagSaturated) != 0;
  const std::size_t size = ResultSize(count, saturated_mask);
  if (out.size() < size) return 0;
  StoreHeader(with_flags, out.data());
  if (count == 0) return size;
  std::uint8_t* p = out.data() + kHeaderBytes;
  StoreBig64(p, written);
  p += kMaskBytes;
  if (saturated_mask) {
    StoreBig64(p, saturated);
    p += kMaskBytes;
  }
  for (std::size_t i = 0; i < count; ++i, p += kValueBytes) StoreBig32(p, slots[i].value);
  return size;
}

// Checks a RESULT's length against its header, and its masks against
// slot_count and each other.
DecodeError CheckResult(std::span<const std::uint8_t> in, const Header& header) {
  const std::size_t count = header.slot_count;
  const bool saturated_mask = count > 0 && (header.flags & kFlagSaturated) != 0;
  const std::size_t expected = ResultSize(count, saturated_mask);
  if (in.size() < expected) return DecodeError::kTruncated;
  if (in.size() > expected) return DecodeError::kOversized;
  if (count == 0) return DecodeError::kNone;
  const std::uint64_t written = LoadBig64(in.data() + kHeaderBytes);
  if (static_cast<std::size_t>(std::popcount(written)) != count) return DecodeError::kBadPayload;
  if (saturated_mask) {
    const std::uint64_t saturated = LoadBig64(in.data() + kHeaderBytes + kMaskBytes);
    if ((saturated & ~written) != 0) return DecodeError::kBadPayload;
  }
  return DecodeError::kNone;
}

// Walks the row blocks; `on_value(array, row, value_offset)` is called per
// value when given.
template <typename OnValue>
DecodeError WalkRowBlocks(std::span<const std::uint8_t> in, const Header& header,
                          OnValue&& on_value) {
  std::size_t offset = kHeaderBytes;
  std::size_t values = 0;
  while (offset < in.size()) {
    if (in.size() - offset < kRowBlockHeaderBytes) return DecodeError::kTruncated;
    const std::uint32_t row = LoadBig32(in.data() + offset);
    const std::uint64_t mask = LoadBig64(in.data() + offset + kRowBlockMaskAt);
    offset += kRowBlockHeaderBytes;
    if (row > kSlotIndexMask || mask == 0) return DecodeError::kBadPayload;
    const auto count = static_cast<std::size_t>(std::popcount(mask));
    if (in.size() - offset < count * kValueBytes) return DecodeError::kTruncated;
    if (values + count > header.slot_count) return DecodeError::kOversized;
    for (std::uint64_t rest = mask; rest != 0; rest &= rest - 1) {
      on_value(static_cast<std::uint32_t>(std::countr_zero(rest)), row, offset);
      offset += kValueBytes;
    }
    values += count;
  }
  if (values != header.slot_count) return DecodeError::kTruncated;
  return DecodeError::kNone;
}

}  // namespace

std::size_t Encode(const Header& header, std::span<const Slot> slots, std::span<std::uint8_t> out) {
  switch (PayloadOf(header.type)) {
    case Payload::kSlots:
      return EncodeSlots(header, slots, out);
    case Payload::kResult:
      return EncodeResult(header, slots, out);
    case Payload::kRowBlocks:
      break;
  }
  return 0;
}

std::size_t UpdateSize(std::span<const CellValue> cells) {
  std::size_t size = kHeaderBytes + kUpdateTagBytes;
  for (std::size_t i = 0; i < cells.size(); ++i) size += UpdateBytesOf(cells, i);
  return size;
}

std::size_t UpdateCellsThatFit(std::span<const CellValue> cells) {
  std::size_t size = kHeaderBytes + kUpdateTagBytes;
  std::size_t count = 0;
  while (count < cells.size() && count < kMaxUpdateValues) {
    const std::size_t grown = size + UpdateBytesOf(cells, count);
    if (grown > kMaxMessageBytes) break;
    size = grown;
    ++count;
  }
  return count;
}

std::size_t EncodeUpdate(const Header& header, std::span<const CellValue> cells,
                         std::span<std::uint8_t> out) {
  if (PayloadOf(header.type) != Payload::kRowBlocks || cells.size() > kMaxUpdateValues) return 0;
  const std::size_t size = UpdateSize(cells);
  if (size > kMaxMessageBytes || out.size() < size) return 0;
  Header counted = header;
  counted.slot_count = static_cast<std::uint16_t>(cells.size());
  StoreHeader(counted, out.data());
  std::uint8_t* p = out.data() + kHeaderBytes;
  std::uint8_t* block_mask = nullptr;
  std::uint64_t mask = 0;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const CellValue& cell = cells[i];
    if (cell.array >= kMaxSlots || cell.index > kSlotIndexMask) return 0;
    const bool new_row = i == 0 || cell.index != cells[i - 1].index;
    if (!new_row && cell.array <= cells[i - 1].array) return 0;
    if (new_row) {
      if (i > 0 && cell.index < cells[i - 1].index) return 0;
      if (block_mask != nullptr) StoreBig64(block_mask, mask);
      StoreBig32(p, cell.index);
      block_mask = p + kRowBlockMaskAt;
      mask = 0;
      p += kRowBlockHeaderBytes;
    }
    mask |= std::uint64_t{1} << cell.array;
    StoreBig32(p, cell.value);
    p += kValueBytes;
  }
  if (block_mask != nullptr) StoreBig64(block_mask, mask);
  std::memset(p, 0, kUpdateTagBytes);
  return size;
}

DecodeError DecodeHeader(std::span<const std::uint8_t> in, Header* header) {
  if (in.size() < kHeaderBytes) return DecodeError::kTruncated;
  const std::uint8_t* p = in.data();
  if (p[kVersionAt] != kVersion) return DecodeError::kBadVersion;
  if (p[kTypeAt] == 0 || p[kTypeAt] > kLastMessageType) return DecodeError::kUnknownType;
  header->version = p[kVersionAt];
  header->type = static_cast<MessageType>(p[kTypeAt]);
  header->flags = LoadBig16(p + kFlagsAt);
  header->job_id = LoadBig32(p + kJobIdAt);
  header->node_id = LoadBig16(p + kNodeIdAt);
  header->slot_count = LoadBig16(p + kSlotCountAt);
  header->epoch = LoadBig32(p + kEpochAt);
  header->seq = LoadBig32(p + kSeqAt);
  switch (PayloadOf(header->type)) {
    case Payload::kSlots: {
      if (header->slot_count > kMaxSlots) return DecodeError::kTooManySlots;
      const std::size_t expected = EncodedSize(header->slot_count);
      if (in.size() < expected) return DecodeError::kTruncated;
      if (in.size() > expected) return DecodeError::kOversized;
      return DecodeError::kNone;
    }
    case Payload::kResult:
      if (header->slot_count > kMaxSlots) return DecodeError::kTooManySlots;
      return CheckResult(in, *header);
    case Payload::kRowBlocks:
      if (header->slot_count > kMaxUpdateValues) return DecodeError::kTooManySlots;
      if (in.size() > kMaxMessageBytes) return DecodeError::kOversized;
      if (in.size() < kHeaderBytes + kUpdateTagBytes) return DecodeError::kTruncated;
      // The blocks end where the tag starts; the tag is the hosts' to check.
      return WalkRowBlocks(in.first(UpdateTagAt(in.size())), *header,
                           [](std::uint32_t, std::uint32_t, std::size_t) {});
  }
  return DecodeError::kUnknownType;
}

DecodeError Decode(std::span<const std::uint8_t> in, Message* message) {
  const DecodeError error = DecodeHeader(in, &message->header);
  if (error != DecodeError::kNone) return error;
  const Header& header = message->header;
  const std::uint8_t* p = in.data() + kHeaderBytes;
  switch (PayloadOf(header.type)) {
    case Payload::kSlots:
      for (std::size_t j = 0; j < header.slot_count; ++j, p += kSlotBytes) {
        const std::uint64_t word = LoadSlotWord(p);
        message->slots[j] = UnpackSlot(SlotKeyWord(word), SlotValueWord(word));
      }
      break;
    case Payload::kResult: {
      if (header.slot_count == 0) break;
      const std::uint64_t written = LoadBig64(p);
      p += kMaskBytes;
      std::uint64_t saturated = 0;
      if ((header.flags & kFlagSaturated) != 0) {
        saturated = LoadBig64(p);
        p += kMaskBytes;
      }
      std::size_t i = 0;
      for (std::uint64_t rest = written; rest != 0; rest &= rest - 1, ++i, p += kValueBytes) {
        const auto j = static_cast<std::uint32_t>(std::countr_zero(rest));
        message->slots[i] = Slot{true, ((saturated >> j) & 1) != 0, j, LoadBig32(p)};
      }
      break;
    }
    case Payload::kRowBlocks: {
      std::size_t i = 0;
      WalkRowBlocks(in.first(UpdateTagAt(in.size())), header,
                    [&](std::uint32_t array, std::uint32_t row, std::size_t offset) {
                      message->cells[i++] = CellValue{array, row, LoadBig32(in.data() + offset)};
                    });
      break;
    }
  }
  return DecodeError::kNone;
}

}  // namespace libra::wire
