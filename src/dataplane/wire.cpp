#include "libra/wire.h"

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
  }
  return "unknown";
}

std::size_t Encode(const Header& header, std::span<const Slot> slots, std::span<std::uint8_t> out) {
  const std::size_t count = header.slot_count;
  if (count > kMaxSlots || count > slots.size() || out.size() < EncodedSize(count)) return 0;
  std::uint8_t* p = out.data();
  p[0] = header.version;
  p[1] = static_cast<std::uint8_t>(header.type);
  StoreBig16(p + 2, header.flags);
  StoreBig32(p + 4, header.job_id);
  StoreBig16(p + 8, header.node_id);
  StoreBig16(p + 10, header.slot_count);
  StoreBig32(p + 12, header.epoch);
  StoreBig32(p + 16, header.seq);
  p += kHeaderBytes;
  for (std::size_t j = 0; j < count; ++j, p += kSlotBytes) {
    StoreBig32(p, PackSlotKey(slots[j]));
    StoreBig32(p + 4, slots[j].value);
  }
  return EncodedSize(count);
}

DecodeError DecodeHeader(std::span<const std::uint8_t> in, Header* header) {
  if (in.size() < kHeaderBytes) return DecodeError::kTruncated;
  const std::uint8_t* p = in.data();
  if (p[0] != kVersion) return DecodeError::kBadVersion;
  if (p[1] == 0 || p[1] > kLastMessageType) return DecodeError::kUnknownType;
  header->version = p[0];
  header->type = static_cast<MessageType>(p[1]);
  header->flags = LoadBig16(p + 2);
  header->job_id = LoadBig32(p + 4);
  header->node_id = LoadBig16(p + 8);
  header->slot_count = LoadBig16(p + 10);
  header->epoch = LoadBig32(p + 12);
  header->seq = LoadBig32(p + 16);
  if (header->slot_count > kMaxSlots) return DecodeError::kTooManySlots;
  const std::size_t expected = EncodedSize(header->slot_count);
  if (in.size() < expected) return DecodeError::kTruncated;
  if (in.size() > expected) return DecodeError::kOversized;
  return DecodeError::kNone;
}

DecodeError Decode(std::span<const std::uint8_t> in, Message* message) {
  const DecodeError error = DecodeHeader(in, &message->header);
  if (error != DecodeError::kNone) return error;
  const std::uint8_t* p = in.data() + kHeaderBytes;
  for (std::size_t j = 0; j < message->header.slot_count; ++j, p += kSlotBytes) {
    message->slots[j] = UnpackSlot(LoadBig32(p), LoadBig32(p + 4));
  }
  return DecodeError::kNone;
}

}  // namespace libra::wire
