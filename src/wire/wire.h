// The hot-path wire format: the one definition of every UDP message that
// workers, servers and the switch exchange. See docs/protocol.md.
//
// All fields are big-endian on the wire. A message is a fixed 20-byte header
// followed by a payload whose kind the message type decides:
//
//   0       1       2               4                               8
//   +-------+-------+---------------+-------------------------------+
//   |version| type  |     flags     |            job_id             |
//   +-------+-------+---------------+-------------------------------+
//   |    node_id    |  slot_count   |             epoch             |
//   +---------------+---------------+-------------------------------+
//   |              seq              |  payload ...
//   +-------------------------------+
//
// Slots (DATA, COLLECT; the other requests carry none): `slot_count` slots
// of 8 bytes,
//
//   slot: | V | S | cell index (30 bits) |  value (32 bits)  |
//
// where slot j addresses register array j of the switch. V says the slot
// carries a value (a packer may leave holes).
//
// RESULT: the sums of the asked cells that some worker wrote in the epoch,
// each the register's fixed-point sum (a two's-complement int32 at the
// job's scale 2^F), 4 bytes each. A 64-bit written mask says which COLLECT slots j (register
// arrays) they answer, in increasing j; when the header has the SATURATED
// flag, a second 64-bit mask says which of those saturated. No mask when
// slot_count (the number of values) is 0.
//
//   | written mask (64) | [saturated mask (64)] | value | value | ...
//
// UPDATE and REPLICA: new float32 parameter values of hot cells, as row
// blocks, then a tag. A block names a row r (cell r of every register
// array) and a 64-bit mask of the arrays j whose cell r follows, 4 bytes
// each, in increasing j; slot_count is the number of values in all blocks.
// The last kUpdateTagBytes of the message are the tag: a MAC under the
// job's secret key, which the servers and workers hold and the switch does
// not (src/hotpath/messages/update_auth.h computes it), over every byte
// before it with the type byte read as UPDATE and the RETRANSMISSION flag
// clear, so that the switch's rewrite of the type and a server's resend
// leave it valid.
//
//   | header | block | block | ... | tag (16 bytes) |
//   block: | row (32) | array mask (64) | value | value | ...
//
// seq numbers an epoch's UPDATE packets from 0 and the last one has the LAST
// flag, so a worker knows when it has them all.
//
// Decoding never reads out of bounds and rejects, with a reason, any buffer
// whose length does not match the payload its header announces.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

#include "wire/coding.h"
#include "wire/wire_format.h"

namespace libra::wire {

// 5: RESULT carries fixed-point sums, not their float32 (4: UPDATE/REPLICA
// end with a 16-byte tag; 3: RESULT as a written mask and
// 4-byte values, UPDATE/REPLICA as row blocks; 2: 8-byte (cell, value)
// slots in every message; 1: RESULT answered every cell and UPDATE
// published every hot value in every epoch).
// The numbers come from wire_format.h, which the XDP switch program shares.
inline constexpr std::uint8_t kVersion = LIBRA_WIRE_VERSION;
inline constexpr std::size_t kHeaderBytes = LIBRA_WIRE_HEADER_BYTES;
// Where each header field starts (the drawing above).
inline constexpr std::size_t kVersionAt = LIBRA_WIRE_VERSION_AT;
inline constexpr std::size_t kTypeAt = LIBRA_WIRE_TYPE_AT;
inline constexpr std::size_t kFlagsAt = LIBRA_WIRE_FLAGS_AT;
inline constexpr std::size_t kJobIdAt = LIBRA_WIRE_JOB_ID_AT;
inline constexpr std::size_t kNodeIdAt = LIBRA_WIRE_NODE_ID_AT;
inline constexpr std::size_t kSlotCountAt = LIBRA_WIRE_SLOT_COUNT_AT;
inline constexpr std::size_t kEpochAt = LIBRA_WIRE_EPOCH_AT;
inline constexpr std::size_t kSeqAt = LIBRA_WIRE_SEQ_AT;

// A slot: the key word (V, S, cell index), then the value.
inline constexpr std::size_t kSlotBytes = LIBRA_WIRE_SLOT_BYTES;
inline constexpr std::size_t kSlotValueAt = LIBRA_WIRE_SLOT_VALUE_AT;
inline constexpr std::size_t kValueBytes = LIBRA_WIRE_VALUE_BYTES;
// RESULT: the written mask at kHeaderBytes, the saturated mask (if any) next.
inline constexpr std::size_t kMaskBytes = LIBRA_WIRE_MASK_BYTES;
// A row block: the row, then the array mask, then the values.
inline constexpr std::size_t kRowBlockMaskAt = LIBRA_WIRE_ROW_BLOCK_MASK_AT;
inline constexpr std::size_t kRowBlockHeaderBytes = LIBRA_WIRE_ROW_BLOCK_HEADER_BYTES;
// UPDATE and REPLICA: the tag that ends the message (UpdateTagAt).
inline constexpr std::size_t kUpdateTagBytes = LIBRA_WIRE_UPDATE_TAG_BYTES;
// Upper bound of the format; a job's slots per packet P is at most this.
inline constexpr std::size_t kMaxSlots = LIBRA_WIRE_MAX_SLOTS;
inline constexpr std::size_t kMaxMessageBytes = LIBRA_WIRE_MAX_MESSAGE_BYTES;
// The most values an UPDATE can carry: one row block and the tag filling
// the message.
inline constexpr std::size_t kMaxUpdateValues = LIBRA_WIRE_MAX_UPDATE_VALUES;
static_assert(kRowBlockHeaderBytes == kRowBlockMaskAt + kMaskBytes);
static_assert(kMaxMessageBytes == kHeaderBytes + kMaxSlots * kSlotBytes);
static_assert(kMaxUpdateValues ==
              (kMaxMessageBytes - kHeaderBytes - kRowBlockHeaderBytes - kUpdateTagBytes) /
                  kValueBytes);
// Where the tag of an UPDATE or REPLICA of `message_bytes` bytes starts (the
// decoder has checked message_bytes >= kHeaderBytes + kUpdateTagBytes).
constexpr std::size_t UpdateTagAt(std::size_t message_bytes) {
  return message_bytes - kUpdateTagBytes;
}

enum class MessageType : std::uint8_t {
  kData = LIBRA_WIRE_TYPE_DATA,  // worker -> switch: gradient values of one epoch
  kAck = LIBRA_WIRE_TYPE_ACK,    // switch -> worker: DATA or FIN (flag kFin) arrived
  kFin = LIBRA_WIRE_TYPE_FIN,  // worker -> switch: all DATA of the epoch ACKed; seq = packets sent
  kReady = LIBRA_WIRE_TYPE_READY,      // switch -> every server: all N workers finished the epoch
  kCollect = LIBRA_WIRE_TYPE_COLLECT,  // server -> switch: read these cells of the epoch
  kResult = LIBRA_WIRE_TYPE_RESULT,    // switch -> server: fixed-point sums of the COLLECTed cells
  kUpdate = LIBRA_WIRE_TYPE_UPDATE,    // server -> switch: new parameter values of hot cells
  kReplica = LIBRA_WIRE_TYPE_REPLICA,  // switch -> every worker: the UPDATE, replicated
  kProbe = LIBRA_WIRE_TYPE_PROBE,      // anyone -> switch: liveness
  kProbeReply = LIBRA_WIRE_TYPE_PROBE_REPLY  // switch -> prober
};
inline constexpr std::uint8_t kLastMessageType = LIBRA_WIRE_LAST_TYPE;

// What follows the header.
enum class Payload : std::uint8_t {
  kSlots,      // slot_count 8-byte slots
  kResult,     // written mask, saturated mask if flagged, slot_count values
  kRowBlocks,  // row blocks holding slot_count values in all
};
Payload PayloadOf(MessageType type);

std::string_view MessageTypeName(MessageType type);

// Header flag bits.
inline constexpr std::uint16_t kFlagRetransmission =
    LIBRA_WIRE_FLAG_RETRANSMISSION;  // sender: this is a resend
// RESULT: some value saturated; the saturated mask follows the written mask.
inline constexpr std::uint16_t kFlagSaturated = LIBRA_WIRE_FLAG_SATURATED;
inline constexpr std::uint16_t kFlagDuplicate =
    LIBRA_WIRE_FLAG_DUPLICATE;                                  // ACK: DATA/FIN seen before
inline constexpr std::uint16_t kFlagFin = LIBRA_WIRE_FLAG_FIN;  // ACK: acknowledges a FIN
inline constexpr std::uint16_t kFlagNotReady =
    LIBRA_WIRE_FLAG_NOT_READY;  // RESULT: epoch not complete
inline constexpr std::uint16_t kFlagLast =
    LIBRA_WIRE_FLAG_LAST;  // UPDATE/REPLICA: the epoch's last packet
// COLLECT: slot 0 names a row; read that cell of every register array.
inline constexpr std::uint16_t kFlagRow = LIBRA_WIRE_FLAG_ROW;

struct Header {
  std::uint8_t version = kVersion;
  MessageType type = MessageType::kData;
  std::uint16_t flags = 0;
  std::uint32_t job_id = 0;
  // The worker in DATA, FIN and ACK; the server in COLLECT, RESULT, READY
  // (its destination) and UPDATE and REPLICA (the server that sent it).
  std::uint16_t node_id = 0;
  std::uint16_t slot_count = 0;
  std::uint32_t epoch = 0;
  // DATA and its ACK: the packet's number within (worker, epoch), from 0.
  // FIN and its ACK: the number of DATA packets the worker sent in the epoch.
  // COLLECT/RESULT: a request number chosen by the server.
  // UPDATE/REPLICA: the packet's number within (server, epoch), from 0.
  std::uint32_t seq = 0;
};

// A slot of DATA or COLLECT, or one value of a RESULT (decoded as a slot
// whose index is the COLLECT slot j it answers).
struct Slot {
  bool valid = false;
  bool saturated = false;
  std::uint32_t index = 0;  // cell index in register array j (< 2^30); RESULT: j
  std::uint32_t value = 0;  // float32 bits
};

// One value of an UPDATE or REPLICA: cell `index` (the row) of register
// array `array`.
struct CellValue {
  std::uint32_t array = 0;
  std::uint32_t index = 0;
  std::uint32_t value = 0;  // float32 bits
};

inline constexpr std::uint32_t kSlotValidBit = LIBRA_WIRE_SLOT_VALID_BIT;
inline constexpr std::uint32_t kSlotSaturatedBit = LIBRA_WIRE_SLOT_SATURATED_BIT;
inline constexpr std::uint32_t kSlotIndexMask = LIBRA_WIRE_SLOT_INDEX_MASK;

struct Message {
  Header header;
  // Slots and RESULT: the first header.slot_count are meaningful.
  std::array<Slot, kMaxSlots> slots;
  // UPDATE and REPLICA: the first header.slot_count, in the packet's order.
  std::array<CellValue, kMaxUpdateValues> cells;
};

enum class DecodeError : std::uint8_t {
  kNone = 0,
  kTruncated,     // shorter than the header or than its slots
  kOversized,     // bytes after the last slot
  kBadVersion,    // version is not kVersion
  kUnknownType,   // type is not a MessageType
  kTooManySlots,  // slot_count > kMaxSlots (kMaxUpdateValues in an UPDATE)
  kBadPayload,    // a mask or row block that contradicts the header or the format
};
std::string_view DecodeErrorName(DecodeError error);

// Bytes an encoded message of slot payload with `slot_count` slots occupies.
constexpr std::size_t EncodedSize(std::size_t slot_count) {
  return kHeaderBytes + slot_count * kSlotBytes;
}
// Bytes a RESULT with `values` values occupies.
constexpr std::size_t ResultSize(std::size_t values, bool saturated) {
  return values == 0 ? kHeaderBytes
                     : kHeaderBytes + kMaskBytes * (saturated ? 2 : 1) + values * kValueBytes;
}

// Writes `header` and the first header.slot_count of `slots` into `out`:
// slots for a slot-payload type; for RESULT, the slots are the written
// values, valid, with strictly increasing index j < kMaxSlots (the SATURATED
// flag is added when a slot is saturated). Returns the number of bytes
// written, or 0 if `out` is too small, slot_count > kMaxSlots, a RESULT's
// slots break that rule, or the type carries row blocks.
std::size_t Encode(const Header& header, std::span<const Slot> slots, std::span<std::uint8_t> out);

// Writes an UPDATE or REPLICA: `header` (slot_count is set to cells.size())
// and `cells` as row blocks, one per run of cells with the same row; cells
// must be sorted by (index, array) without repeats; the tag is left zero
// for the sender to sign (src/hotpath/messages/update_auth.h). Returns the
// bytes written, tag included, or 0 if they do not fit `out` or
// kMaxMessageBytes, a cell is out of the format's range, or the order is
// broken.
std::size_t EncodeUpdate(const Header& header, std::span<const CellValue> cells,
                         std::span<std::uint8_t> out);
// The bytes EncodeUpdate writes for cells sorted as it requires (the tag
// included).
std::size_t UpdateSize(std::span<const CellValue> cells);
// How many of the leading `cells` (sorted as EncodeUpdate requires) one
// UPDATE carries: as many as kMaxMessageBytes holds besides the header and
// the tag, a new row costing its block header and every value kValueBytes.
std::size_t UpdateCellsThatFit(std::span<const CellValue> cells);

// Reads the header and checks that the length matches the payload it
// announces (masks and row blocks are walked; values are not read).
DecodeError DecodeHeader(std::span<const std::uint8_t> in, Header* header);

// Reads the header and the whole payload.
DecodeError Decode(std::span<const std::uint8_t> in, Message* message);

// Header fields of an encoded message (at least kHeaderBytes long), read or
// rewritten in place: a resend sets its flags, the switch turns an UPDATE
// into a REPLICA or a request's header into its ACK without encoding again.
inline std::uint16_t SlotCountOf(const std::uint8_t* message) {
  return LoadBig16(message + kSlotCountAt);
}
inline std::uint32_t SeqOf(const std::uint8_t* message) { return LoadBig32(message + kSeqAt); }
inline void SetType(std::uint8_t* message, MessageType type) {
  message[kTypeAt] = static_cast<std::uint8_t>(type);
}
inline void SetFlags(std::uint8_t* message, std::uint16_t flags) {
  StoreBig16(message + kFlagsAt, flags);
}
inline void SetSlotCount(std::uint8_t* message, std::uint16_t slot_count) {
  StoreBig16(message + kSlotCountAt, slot_count);
}
inline void SetEpoch(std::uint8_t* message, std::uint32_t epoch) {
  StoreBig32(message + kEpochAt, epoch);
}
inline void SetSeq(std::uint8_t* message, std::uint32_t seq) { StoreBig32(message + kSeqAt, seq); }

// One slot (kSlotBytes at `slot`) as one 64-bit word, key word high and
// value low: one load and one byte swap, which the switch's parser
// vectorises over a packet's slots.
inline std::uint64_t LoadSlotWord(const std::uint8_t* slot) {
  std::uint64_t big_endian;
  std::memcpy(&big_endian, slot, sizeof(big_endian));
  if constexpr (std::endian::native == std::endian::little) {
    return __builtin_bswap64(big_endian);
  } else {
    return big_endian;
  }
}
inline constexpr std::uint32_t SlotKeyWord(std::uint64_t slot_word) {
  return static_cast<std::uint32_t>(slot_word >> 32);
}
inline constexpr std::uint32_t SlotValueWord(std::uint64_t slot_word) {
  return static_cast<std::uint32_t>(slot_word);
}
// The V bit of a key word, as 0 or 1.
inline constexpr std::uint32_t SlotValidBitOf(std::uint32_t key_word) { return key_word >> 31; }

// Slot word <-> Slot.
inline Slot UnpackSlot(std::uint32_t key_word, std::uint32_t value) {
  return Slot{(key_word & kSlotValidBit) != 0, (key_word & kSlotSaturatedBit) != 0,
              key_word & kSlotIndexMask, value};
}
inline std::uint32_t PackSlotKey(const Slot& slot) {
  return (slot.valid ? kSlotValidBit : 0u) | (slot.saturated ? kSlotSaturatedBit : 0u) |
         (slot.index & kSlotIndexMask);
}

}  // namespace libra::wire
