/* What the XDP switch program (xdp_switch.bpf.c) and its user-space part
 * (xdp_program.cpp) agree on: the layout of every map's value and the
 * counter indices. Plain C, included by both; the numbers of the packets
 * themselves come from wire/wire_format.h.
 *
 * The counter indices mirror dataplane::DropReason and dataplane::Event
 * (drops first, then events, then what only this back end counts);
 * xdp_program.cpp checks the two against each other at compile time. */
#ifndef LIBRA_XDP_XDP_ABI_H_
#define LIBRA_XDP_XDP_ABI_H_

#ifdef __cplusplus
#include <cstdint>
typedef std::uint8_t libra_u8;
typedef std::uint16_t libra_u16;
typedef std::uint32_t libra_u32;
typedef std::uint64_t libra_u64;
#else
typedef __u8 libra_u8;
typedef __u16 libra_u16;
typedef __u32 libra_u32;
typedef __u64 libra_u64;
#endif

/* Epoch tags of a register cell's hi half (as dataplane/stateful_ops.h):
 * epoch + 1 in the low 31 bits, bit 31 the sticky saturation flag of a
 * value cell. */
#define LIBRA_XDP_TAG_MASK 0x7fffffffu
#define LIBRA_XDP_SATURATED_TAG_BIT 0x80000000u
#define LIBRA_XDP_MAX_EPOCH (LIBRA_XDP_TAG_MASK - 1)

/* Map sizes fixed at build time; the value registers are sized at load. */
#define LIBRA_XDP_MAX_WORKERS 256
#define LIBRA_XDP_MAX_SERVERS 64
#define LIBRA_XDP_MAX_PEERS (LIBRA_XDP_MAX_WORKERS + LIBRA_XDP_MAX_SERVERS)
#define LIBRA_XDP_DEDUP_WINDOW 64
#define LIBRA_XDP_MAX_JOB_SLOTS 32 /* P: the pipeline profile's limit */

/* A register cell as one 64-bit word, updated with one compare-and-swap:
 * hi (epoch tag) in the high half, lo (sum, count, seq) in the low half. */
#define LIBRA_XDP_CELL(hi, lo) (((libra_u64)(hi) << 32) | (libra_u32)(lo))
#define LIBRA_XDP_CELL_HI(cell) ((libra_u32)((cell) >> 32))
#define LIBRA_XDP_CELL_LO(cell) ((libra_u32)(cell))

/* The job's parameters (map `job`, one entry), written by the control plane. */
struct libra_xdp_job {
  libra_u32 installed; /* 0: no job; packets other than PROBE are dropped */
  libra_u32 job_id;
  libra_u32 workers;
  libra_u32 servers;
  libra_u32 cells_per_array;
  libra_u32 slots_per_packet;
  libra_u32 switch_ipv4; /* the switch's address (network order); 0: any */
  libra_u32 switch_port; /* UDP port the switch answers on (network order) */
  /* Failure injection (switchd --drop-rate, --drop-seed, --die-at-epoch),
   * kept across jobs: a packet for the switch is dropped on arrival, and an
   * answer instead of being sent, when the next number of its stream
   * (splitmix64 on loss_arrivals or loss_answers below, as
   * switchd's LossInjector) is below loss_threshold (out of 2^64; 0: none);
   * a DATA packet of epoch die_epoch_plus_one - 1 goes up to switchd (0:
   * none), which kills itself. */
  libra_u32 die_epoch_plus_one;
  libra_u32 reserved;
  libra_u64 loss_threshold;
  /* The streams' splitmix64 states, which the program advances; seeded by
   * the control plane, kept when it rewrites the job. */
  libra_u64 loss_arrivals;
  libra_u64 loss_answers;
};

/* The two loss streams of inject_loss. */
#define LIBRA_XDP_LOSS_ARRIVALS 0
#define LIBRA_XDP_LOSS_ANSWERS 1

/* The peer table's key (source IPv4 and port, network order) and value. */
struct libra_xdp_peer_key {
  libra_u32 ipv4;
  libra_u16 port;
  libra_u16 zero;
};
/* Worker w's address by its node id (map `worker_addresses`): a DATA
 * packet whose source is its node id's address is that worker's without the
 * peer table's hash lookup; any other packet asks the peer table. */
struct libra_xdp_worker_address {
  libra_u32 ipv4; /* network order */
  libra_u16 port; /* network order */
  libra_u16 installed;
};
#define LIBRA_XDP_ROLE_WORKER 0
#define LIBRA_XDP_ROLE_SERVER 1
struct libra_xdp_peer {
  libra_u16 role;
  libra_u16 id;
};

/* The counters (per-CPU array), dataplane's drops then events. */
#define LIBRA_XDP_DROP_TRUNCATED 0
#define LIBRA_XDP_DROP_OVERSIZED 1
#define LIBRA_XDP_DROP_BAD_VERSION 2
#define LIBRA_XDP_DROP_UNKNOWN_TYPE 3
#define LIBRA_XDP_DROP_TOO_MANY_SLOTS 4
#define LIBRA_XDP_DROP_BAD_PAYLOAD 5
#define LIBRA_XDP_DROP_NO_JOB 6
#define LIBRA_XDP_DROP_WRONG_JOB 7
#define LIBRA_XDP_DROP_UNKNOWN_PEER 8
#define LIBRA_XDP_DROP_NODE_ID_MISMATCH 9
#define LIBRA_XDP_DROP_UNEXPECTED_TYPE 10
#define LIBRA_XDP_DROP_CELL_INDEX_OUT_OF_RANGE 11
#define LIBRA_XDP_DROP_EPOCH_OUT_OF_RANGE 12
#define LIBRA_XDP_DROP_FIN_COUNT_MISMATCH 13
#define LIBRA_XDP_DROP_STALE_EPOCH 14
#define LIBRA_XDP_DROP_COUNT 15

#define LIBRA_XDP_EVENT(n) (LIBRA_XDP_DROP_COUNT + (n))
#define LIBRA_XDP_PACKETS_IN LIBRA_XDP_EVENT(0)
#define LIBRA_XDP_PACKETS_OUT LIBRA_XDP_EVENT(1)
#define LIBRA_XDP_DATA_PACKETS LIBRA_XDP_EVENT(2)
#define LIBRA_XDP_DATA_DUPLICATES LIBRA_XDP_EVENT(3)
#define LIBRA_XDP_DATA_ONE_ROW LIBRA_XDP_EVENT(4)
#define LIBRA_XDP_RETRANSMISSIONS LIBRA_XDP_EVENT(5)
#define LIBRA_XDP_VALUES_AGGREGATED LIBRA_XDP_EVENT(6)
#define LIBRA_XDP_VALUES_REJECTED LIBRA_XDP_EVENT(7)
#define LIBRA_XDP_VALUES_SATURATED LIBRA_XDP_EVENT(8)
#define LIBRA_XDP_VALUES_STALE LIBRA_XDP_EVENT(9)
#define LIBRA_XDP_SATURATED_CELL_UPDATES LIBRA_XDP_EVENT(10)
#define LIBRA_XDP_ACKS LIBRA_XDP_EVENT(11)
#define LIBRA_XDP_FIN_PACKETS LIBRA_XDP_EVENT(12)
#define LIBRA_XDP_FIN_DUPLICATES LIBRA_XDP_EVENT(13)
#define LIBRA_XDP_EPOCHS_READY LIBRA_XDP_EVENT(14)
#define LIBRA_XDP_READY_SENT LIBRA_XDP_EVENT(15)
#define LIBRA_XDP_COLLECT_PACKETS LIBRA_XDP_EVENT(16)
#define LIBRA_XDP_COLLECT_NOT_READY LIBRA_XDP_EVENT(17)
#define LIBRA_XDP_RESULTS_SENT LIBRA_XDP_EVENT(18)
#define LIBRA_XDP_RESULTS_SATURATED LIBRA_XDP_EVENT(19)
#define LIBRA_XDP_UPDATE_PACKETS LIBRA_XDP_EVENT(20)
#define LIBRA_XDP_REPLICAS_SENT LIBRA_XDP_EVENT(21)
#define LIBRA_XDP_PROBES LIBRA_XDP_EVENT(22)
#define LIBRA_XDP_EVENT_COUNT 23
/* Only this back end: packets handed to the user-space part (XDP_PASS of a
 * READY or REPLICA fan-out); frames that are not the switch's IPv4/UDP
 * address (passed to the kernel untouched); register updates that lost
 * every compare-and-swap retry to other CPUs (the update is not made and the
 * cell's saturation flag is set instead with an atomic OR, so the server
 * aggregates that key itself rather than trust the sum). */
#define LIBRA_XDP_UPCALLS LIBRA_XDP_EVENT(LIBRA_XDP_EVENT_COUNT + 0)
#define LIBRA_XDP_NOT_SWITCH_TRAFFIC LIBRA_XDP_EVENT(LIBRA_XDP_EVENT_COUNT + 1)
#define LIBRA_XDP_CAS_EXHAUSTED LIBRA_XDP_EVENT(LIBRA_XDP_EVENT_COUNT + 2)
/* Failure injection: packets dropped on arrival, answers dropped instead of
 * sent (switchd's ingress_loss_injected and egress_loss_injected). */
#define LIBRA_XDP_INGRESS_LOSS_INJECTED LIBRA_XDP_EVENT(LIBRA_XDP_EVENT_COUNT + 3)
#define LIBRA_XDP_EGRESS_LOSS_INJECTED LIBRA_XDP_EVENT(LIBRA_XDP_EVENT_COUNT + 4)
/* Answers longer than the frame's tailroom allowed (a RESULT to a 28-byte
 * row COLLECT: veth leaves only cache-line slack after a frame it copied
 * from an skb), grown into the headroom instead; and answers that fitted
 * neither, dropped. */
#define LIBRA_XDP_REPLIES_GROWN_AT_HEAD LIBRA_XDP_EVENT(LIBRA_XDP_EVENT_COUNT + 5)
#define LIBRA_XDP_REPLIES_WITHOUT_ROOM LIBRA_XDP_EVENT(LIBRA_XDP_EVENT_COUNT + 6)
#define LIBRA_XDP_COUNTER_COUNT LIBRA_XDP_EVENT(LIBRA_XDP_EVENT_COUNT + 7)

#endif /* LIBRA_XDP_XDP_ABI_H_ */
