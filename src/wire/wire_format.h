/* The numbers of the hot-path wire format (docs/protocol.md) as plain C
 * preprocessor constants, so that the one definition serves both the C++
 * code (wire.h defines its typed constants from these) and the XDP switch
 * program, which is restricted C compiled with clang -target bpf and cannot
 * include C++ headers. Nothing here but numbers: wire.h draws the layout. */
#ifndef LIBRA_WIRE_WIRE_FORMAT_H_
#define LIBRA_WIRE_WIRE_FORMAT_H_

#define LIBRA_WIRE_VERSION 5
#define LIBRA_WIRE_HEADER_BYTES 20

/* Where each header field starts. */
#define LIBRA_WIRE_VERSION_AT 0
#define LIBRA_WIRE_TYPE_AT 1
#define LIBRA_WIRE_FLAGS_AT 2
#define LIBRA_WIRE_JOB_ID_AT 4
#define LIBRA_WIRE_NODE_ID_AT 8
#define LIBRA_WIRE_SLOT_COUNT_AT 10
#define LIBRA_WIRE_EPOCH_AT 12
#define LIBRA_WIRE_SEQ_AT 16

/* A slot: the key word (V, S, cell index), then the value. */
#define LIBRA_WIRE_SLOT_BYTES 8
#define LIBRA_WIRE_SLOT_VALUE_AT 4
#define LIBRA_WIRE_VALUE_BYTES 4
/* RESULT masks and the mask of a row block. */
#define LIBRA_WIRE_MASK_BYTES 8
#define LIBRA_WIRE_ROW_BLOCK_MASK_AT 4
#define LIBRA_WIRE_ROW_BLOCK_HEADER_BYTES (LIBRA_WIRE_ROW_BLOCK_MASK_AT + LIBRA_WIRE_MASK_BYTES)
#define LIBRA_WIRE_MAX_SLOTS 64
#define LIBRA_WIRE_MAX_MESSAGE_BYTES \
  (LIBRA_WIRE_HEADER_BYTES + LIBRA_WIRE_MAX_SLOTS * LIBRA_WIRE_SLOT_BYTES)
/* UPDATE and REPLICA end with a MAC tag of this many bytes (the switch
 * forwards it; only the hosts compute and check it). */
#define LIBRA_WIRE_UPDATE_TAG_BYTES 16
#define LIBRA_WIRE_MAX_UPDATE_VALUES                                                             \
  ((LIBRA_WIRE_MAX_MESSAGE_BYTES - LIBRA_WIRE_HEADER_BYTES - LIBRA_WIRE_ROW_BLOCK_HEADER_BYTES - \
    LIBRA_WIRE_UPDATE_TAG_BYTES) /                                                               \
   LIBRA_WIRE_VALUE_BYTES)

/* Message types. */
#define LIBRA_WIRE_TYPE_DATA 1
#define LIBRA_WIRE_TYPE_ACK 2
#define LIBRA_WIRE_TYPE_FIN 3
#define LIBRA_WIRE_TYPE_READY 4
#define LIBRA_WIRE_TYPE_COLLECT 5
#define LIBRA_WIRE_TYPE_RESULT 6
#define LIBRA_WIRE_TYPE_UPDATE 7
#define LIBRA_WIRE_TYPE_REPLICA 8
#define LIBRA_WIRE_TYPE_PROBE 9
#define LIBRA_WIRE_TYPE_PROBE_REPLY 10
#define LIBRA_WIRE_LAST_TYPE 10

/* Header flag bits. */
#define LIBRA_WIRE_FLAG_RETRANSMISSION (1u << 0)
#define LIBRA_WIRE_FLAG_SATURATED (1u << 1)
#define LIBRA_WIRE_FLAG_DUPLICATE (1u << 2)
#define LIBRA_WIRE_FLAG_FIN (1u << 3)
#define LIBRA_WIRE_FLAG_NOT_READY (1u << 4)
#define LIBRA_WIRE_FLAG_LAST (1u << 5)
#define LIBRA_WIRE_FLAG_ROW (1u << 6)

/* The key word of a slot. */
#define LIBRA_WIRE_SLOT_VALID_BIT (1u << 31)
#define LIBRA_WIRE_SLOT_SATURATED_BIT (1u << 30)
#define LIBRA_WIRE_SLOT_INDEX_MASK ((1u << 30) - 1)

#endif /* LIBRA_WIRE_WIRE_FORMAT_H_ */
