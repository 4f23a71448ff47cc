/* The switch program for the kernel's XDP hook: the per-packet program of
 * src/dataplane (docs/switch.md) in restricted C, checked by the kernel's
 * verifier and compiled with clang -target bpf. Integer arithmetic only; the
 * job, the peer table, the conversion table and the register arrays live in
 * maps that the control plane (xdp_program.cpp) writes.
 *
 *   Ethernet/IPv4/UDP to the switch's address -> parse -> admit -> per path:
 *     DATA:    dedup -> convert -> aggregate -> ACK            (XDP_TX)
 *     FIN:     DATA count -> FIN once -> FIN count -> ACK      (XDP_TX)
 *              ... the N-th FIN: ACK + READY to every server   (XDP_PASS, user space)
 *     COLLECT: readiness -> read cells -> RESULT               (XDP_TX)
 *     UPDATE:  REPLICA to every worker + ACK                   (XDP_PASS, user space)
 *     PROBE:   PROBE_REPLY                                     (XDP_TX)
 *   anything else addressed elsewhere: XDP_PASS, untouched.
 *
 * One XDP pass emits at most one packet (XDP_TX). The two answers with
 * several destinations, READY and REPLICA, carry no state the program has
 * not already updated, so they go up to the user-space part: the completing
 * FIN goes up rewritten into the ACK that answers it, the UPDATE as it came,
 * and user space sends the copies (docs/switch.md, "The XDP back end"). */
// The kernel's types first: libbpf's headers use them.
// clang-format off
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
// clang-format on

#include "wire/wire_format.h"
#include "xdp/xdp_abi.h"

char LICENSE[] SEC("license") = "GPL";

/* Retries of a register's compare-and-swap against other CPUs' updates. */
#define CAS_TRIES 8
#define PAYLOAD_AT (sizeof(struct ethhdr) + sizeof(struct iphdr) + sizeof(struct udphdr))

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct libra_xdp_job);
} job SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, LIBRA_XDP_MAX_PEERS);
  __type(key, struct libra_xdp_peer_key);
  __type(value, struct libra_xdp_peer);
} peers SEC(".maps");

/* The common case's shortcut past `peers` (xdp_abi.h): an array lookup is
 * inlined, a hash lookup is a call and a hash. */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, LIBRA_XDP_MAX_WORKERS);
  __type(key, __u32);
  __type(value, struct libra_xdp_worker_address);
} worker_addresses SEC(".maps");

/* float32 -> fixed: the exponent table's ToFixedEntry words. */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 256);
  __type(key, __u32);
  __type(value, __u32);
} to_fixed SEC(".maps");

/* The register arrays, one 64-bit cell each (xdp_abi.h), mmap-able so the
 * control plane clears and reads them without a system call per cell. */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(map_flags, BPF_F_MMAPABLE);
  __uint(max_entries, LIBRA_XDP_MAX_WORKERS *LIBRA_XDP_DEDUP_WINDOW);
  __type(key, __u32);
  __type(value, __u64);
} dedup_window SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(map_flags, BPF_F_MMAPABLE);
  __uint(max_entries, LIBRA_XDP_MAX_WORKERS * 2);
  __type(key, __u32);
  __type(value, __u64);
} data_count SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(map_flags, BPF_F_MMAPABLE);
  __uint(max_entries, LIBRA_XDP_MAX_WORKERS);
  __type(key, __u32);
  __type(value, __u64);
} fin_seen SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(map_flags, BPF_F_MMAPABLE);
  __uint(max_entries, 2);
  __type(key, __u32);
  __type(value, __u64);
} fin_count SEC(".maps");

/* Value arrays, row by row as in the model: cell i of array j (i counting
 * both banks) at i * P + j. Sized by the loader from the pipeline profile's
 * register budget. */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(map_flags, BPF_F_MMAPABLE);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u64);
} values SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, LIBRA_XDP_COUNTER_COUNT);
  __type(key, __u32);
  __type(value, __u64);
} counters SEC(".maps");

/* A packet's metadata (the PHV): its payload copied out of the frame, the
 * slots as parallel words, and the answer being built. Per CPU, as 1 KiB is
 * more than the 512-byte stack. */
struct phv {
  __u8 in[LIBRA_WIRE_MAX_MESSAGE_BYTES];
  __u8 out[LIBRA_WIRE_MAX_MESSAGE_BYTES];
  __u32 index[LIBRA_XDP_MAX_JOB_SLOTS];
  __u32 value[LIBRA_XDP_MAX_JOB_SLOTS];
  __u32 word[LIBRA_XDP_MAX_JOB_SLOTS]; /* DATA: the slot's exponent-table word */
  /* DATA: the slot's cell in `values`, NO_CELL for an invalid slot. */
  __u32 target[LIBRA_XDP_MAX_JOB_SLOTS];
  __u32 forget; /* see forget() */
};

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct phv);
} scratch SEC(".maps");

static __always_inline void count_n(__u32 counter, __u64 n) {
  __u64 *c = bpf_map_lookup_elem(&counters, &counter);
  if (c) *c += n;
}
static __always_inline void bump(__u32 counter) { count_n(counter, 1); }

/* Injected loss (switchd --drop-rate, --drop-seed): true for a share of the
 * calls, drawn from `stream`'s splitmix64 sequence (switchd's LossInjector,
 * number for number). The state moves by one atomic add, so each call takes
 * the next number even when CPUs race; which packet gets which number is
 * then the order they took them in. */
static __noinline int draw_loss(__u32 stream) {
  __u32 zero = 0;
  struct libra_xdp_job *j = bpf_map_lookup_elem(&job, &zero);
  if (!j || j->loss_threshold == 0) return 0;
  /* The states live in the job map's value: a second lookup would cost
   * the stack bytes the deepest call chain does not have. */
  __u64 *state = stream == LIBRA_XDP_LOSS_ANSWERS ? &j->loss_answers : &j->loss_arrivals;
  const __u64 golden = 0x9e3779b97f4a7c15ULL;
  __u64 z = __sync_fetch_and_add(state, golden) + golden;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return (z ^ (z >> 31)) < j->loss_threshold;
}

/* Without loss injected (the common case) no call: see the register
 * programs on what a call costs. */
static __always_inline int inject_loss(const struct libra_xdp_job *j, __u32 stream) {
  return j->loss_threshold != 0 && draw_loss(stream);
}

/* Big-endian fields of the copied payload; `at` is a constant or masked. */
static __always_inline __u32 load16(const __u8 *p) { return ((__u32)p[0] << 8) | p[1]; }
static __always_inline __u32 load32(const __u8 *p) {
  return ((__u32)p[0] << 24) | ((__u32)p[1] << 16) | ((__u32)p[2] << 8) | p[3];
}
static __always_inline void store16(__u8 *p, __u32 v) {
  p[0] = v >> 8;
  p[1] = v;
}
static __always_inline void store32(__u8 *p, __u32 v) {
  p[0] = v >> 24;
  p[1] = v >> 16;
  p[2] = v >> 8;
  p[3] = v;
}
static __always_inline void store64(__u8 *p, __u64 v) {
  store32(p, v >> 32);
  store32(p + 4, (__u32)v);
}

static __always_inline __u32 popcount64(__u64 x) { return __builtin_popcountll(x); }

/* --- the register programs (dataplane/stateful_ops.h), one CAS each --- */

#define ORDER_OLDER 0
#define ORDER_SAME 1
#define ORDER_NEWER 2

static __always_inline int compare_tags(__u32 packet_tag, __u32 stored_hi) {
  __u32 stored = stored_hi & LIBRA_XDP_TAG_MASK;
  if (packet_tag == stored) return ORDER_SAME;
  return packet_tag > stored ? ORDER_NEWER : ORDER_OLDER;
}

/* Writes `next` over `seen` unless another CPU changed the cell meanwhile. */
static __always_inline int publish(__u64 *cell, __u64 seen, __u64 next) {
  return next == seen || __sync_val_compare_and_swap(cell, seen, next) == seen;
}

#define ACTION_KEEP 0
#define ACTION_ADD 1
#define ACTION_REPLACE 2
/* AccumulateValue's result also says when the cell carries the flag after
 * the update. */
#define ACTION_SATURATED 4
/* A step's answer when another CPU changed the cell between read and CAS. */
#define LOST_RACE -1

/* Each register program is a step (read the cell, compute, one CAS) that
 * the hot paths inline, and a global function that retries the step when
 * it lost a race. The common case, no other CPU on the cell, then costs no
 * BPF-to-BPF call: on this machine's kernel (AMD, Safe-RET against SRSO)
 * every call's return goes through the return thunk, about 10 ns, which
 * was most of the cost of a slot when every slot took four calls. The
 * retry loops stay out of line: the verifier checks a global function
 * once, on its own (with the loops inlined into the slot loop it gave up
 * after a million instructions). */

/* AccumulateValue: same epoch adds (saturating), newer replaces, older
 * keeps. */
static __always_inline int accumulate_step(__u64 *cell, __u32 tag, __s32 addend, int mark) {
  __u64 seen = *(volatile __u64 *)cell;
  __u32 hi = LIBRA_XDP_CELL_HI(seen);
  __u32 lo = LIBRA_XDP_CELL_LO(seen);
  int order = compare_tags(tag, hi);
  int action;
  if (order == ORDER_SAME) {
    __s32 sum = 0;
    if (__builtin_add_overflow((__s32)lo, addend, &sum)) {
      sum = addend > 0 ? 0x7fffffff : (__s32)0x80000000;
      hi |= LIBRA_XDP_SATURATED_TAG_BIT;
    }
    lo = (__u32)sum;
    if (mark) hi |= LIBRA_XDP_SATURATED_TAG_BIT;
    action = ACTION_ADD;
  } else if (order == ORDER_NEWER) {
    lo = (__u32)addend;
    hi = tag | (mark ? LIBRA_XDP_SATURATED_TAG_BIT : 0);
    action = ACTION_REPLACE;
  } else {
    return ACTION_KEEP;
  }
  if (!publish(cell, seen, LIBRA_XDP_CELL(hi, lo))) return LOST_RACE;
  return action | ((hi & LIBRA_XDP_SATURATED_TAG_BIT) ? ACTION_SATURATED : 0);
}

__noinline int accumulate_retry(__u64 *cell, __u32 tag, __s32 addend, int mark) {
  if (!cell) return ACTION_KEEP;
  for (int t = 0; t < CAS_TRIES; t++) {
    int action = accumulate_step(cell, tag, addend, mark);
    if (action != LOST_RACE) return action;
  }
  /* Lost every race: flag the cell rather than trust a sum missing a value. */
  __sync_fetch_and_or(cell, (__u64)LIBRA_XDP_SATURATED_TAG_BIT << 32);
  bump(LIBRA_XDP_CAS_EXHAUSTED);
  return ACTION_ADD | ACTION_SATURATED;
}

static __always_inline int accumulate(__u64 *cell, __u32 tag, __s32 addend, int mark) {
  int action = accumulate_step(cell, tag, addend, mark);
  return action != LOST_RACE ? action : accumulate_retry(cell, tag, addend, mark);
}

/* CountInEpoch: the count after the update, 0 when kept. */
static __always_inline long count_step(__u64 *cell, __u32 tag) {
  __u64 seen = *(volatile __u64 *)cell;
  int order = compare_tags(tag, LIBRA_XDP_CELL_HI(seen));
  if (order == ORDER_OLDER) return 0;
  __u32 n = order == ORDER_SAME ? LIBRA_XDP_CELL_LO(seen) + 1 : 1;
  return publish(cell, seen, LIBRA_XDP_CELL(tag, n)) ? (long)n : LOST_RACE;
}

__noinline __u32 count_in_epoch_retry(__u64 *cell, __u32 tag) {
  if (!cell) return 0;
  for (int t = 0; t < CAS_TRIES; t++) {
    long n = count_step(cell, tag);
    if (n != LOST_RACE) return (__u32)n;
  }
  bump(LIBRA_XDP_CAS_EXHAUSTED);
  return 0;
}

static __always_inline __u32 count_in_epoch(__u64 *cell, __u32 tag) {
  long n = count_step(cell, tag);
  return n != LOST_RACE ? (__u32)n : count_in_epoch_retry(cell, tag);
}

/* ReadInEpoch: lo when the cell holds the packet's epoch; *newer when the
 * bank has moved past it; *written when it holds it. */
static __always_inline __u32 read_in_epoch(__u64 seen, __u32 tag, int *newer, int *written) {
  int order = compare_tags(tag, LIBRA_XDP_CELL_HI(seen));
  *newer = order == ORDER_OLDER;
  *written = order == ORDER_SAME;
  return order == ORDER_SAME ? LIBRA_XDP_CELL_LO(seen) : 0;
}

/* RecordSeq: 1 when (tag, seq) is new for its dedup cell. */
static __always_inline int record_step(__u64 *cell, __u32 tag, __u32 seq) {
  __u64 seen = *(volatile __u64 *)cell;
  int order = compare_tags(tag, LIBRA_XDP_CELL_HI(seen));
  if (!(order == ORDER_NEWER || (order == ORDER_SAME && seq > LIBRA_XDP_CELL_LO(seen)))) return 0;
  return publish(cell, seen, LIBRA_XDP_CELL(tag, seq)) ? 1 : LOST_RACE;
}

__noinline int record_seq_retry(__u64 *cell, __u32 tag, __u32 seq) {
  if (!cell) return 0;
  for (int t = 0; t < CAS_TRIES; t++) {
    int recorded = record_step(cell, tag, seq);
    if (recorded != LOST_RACE) return recorded;
  }
  bump(LIBRA_XDP_CAS_EXHAUSTED);
  return 0;
}

static __always_inline int record_seq(__u64 *cell, __u32 tag, __u32 seq) {
  int recorded = record_step(cell, tag, seq);
  return recorded != LOST_RACE ? recorded : record_seq_retry(cell, tag, seq);
}

/* MarkEpochOnce: 1 the first time in the epoch (FIN's path, one a worker
 * and epoch: no inline step). */
__noinline int mark_epoch_once(__u64 *cell, __u32 tag) {
  if (!cell) return 0;
  for (int t = 0; t < CAS_TRIES; t++) {
    __u64 seen = *(volatile __u64 *)cell;
    if (compare_tags(tag, LIBRA_XDP_CELL_HI(seen)) != ORDER_NEWER) return 0;
    if (publish(cell, seen, LIBRA_XDP_CELL(tag, LIBRA_XDP_CELL_LO(seen)))) return 1;
  }
  bump(LIBRA_XDP_CAS_EXHAUSTED);
  return 0;
}

/* --- conversion (wire/fixed_point.h) --- */

#define STATUS_OK 0
#define STATUS_SATURATED 1
#define STATUS_REJECTED 2

/* ApplyToFixed: the exponent entry's operands applied to the float's bits. */
static __always_inline __s32 apply_to_fixed(__u32 word, __u32 bits) {
  __u32 mantissa_mask = (__u32)((__s32)word >> 31) & 0x7fffffu;
  __u32 hidden = ((word >> 7) & 0x800000u) | ((__u32)((__s32)(word << 2) >> 31) >> 1);
  __u32 right = word & 31;
  __u32 left = (word >> 5) & 7;
  __u32 bias = (1u << right) >> 1;
  __u32 magnitude = ((((bits & mantissa_mask) | hidden) + bias) >> right) << left;
  __u32 sign = 0u - (bits >> 31);
  return (__s32)((magnitude ^ sign) - sign);
}

/* The loops of COLLECT (slots) and UPDATE (row blocks) run as bpf_loop
 * callbacks, which the verifier checks once rather than once per iteration
 * and branch. Each callback finds the PHV again (a per-CPU array lookup,
 * inlined) and keeps its running results in the loop's state on the
 * caller's stack. DATA, the hot path, has plain loops instead: a callback
 * is a call (see data_path). */
static __always_inline struct phv *find_phv(void) {
  __u32 zero = 0;
  return bpf_map_lookup_elem(&scratch, &zero);
}

#define WELL_FORMED LIBRA_XDP_COUNTER_COUNT /* no drop reason: see check_payload */

struct block_walk {
  __u32 len, count, offset, seen, error;
};

static long walk_block(__u32 b, struct block_walk *w) {
  struct phv *phv = find_phv();
  if (!phv) return 1;
  __u32 len = w->len;
  __u32 offset = w->offset;
  if (offset >= len) return 1;
  if (len - offset < LIBRA_WIRE_ROW_BLOCK_HEADER_BYTES ||
      offset > LIBRA_WIRE_MAX_MESSAGE_BYTES - LIBRA_WIRE_ROW_BLOCK_HEADER_BYTES) {
    w->error = LIBRA_XDP_DROP_TRUNCATED;
    return 1;
  }
  const __u8 *at = phv->in + (offset & 1023);
  __u32 row = load32(at);
  __u64 mask = ((__u64)load32(at + 4) << 32) | load32(at + 8);
  offset += LIBRA_WIRE_ROW_BLOCK_HEADER_BYTES;
  if (row > LIBRA_WIRE_SLOT_INDEX_MASK || mask == 0) {
    w->error = LIBRA_XDP_DROP_BAD_PAYLOAD;
    return 1;
  }
  __u32 n = popcount64(mask);
  if (len - offset < n * LIBRA_WIRE_VALUE_BYTES) {
    w->error = LIBRA_XDP_DROP_TRUNCATED;
    return 1;
  }
  if (w->seen + n > w->count) {
    w->error = LIBRA_XDP_DROP_OVERSIZED;
    return 1;
  }
  w->offset = offset + n * LIBRA_WIRE_VALUE_BYTES;
  w->seen += n;
  return 0;
}

/* --- parse: DecodeHeader's checks, with its drop reasons --- */

/* WELL_FORMED when the payload of `len` bytes (the first of them in `in`)
 * is well formed, else the drop counter (truncated is counter 0). */
static __always_inline __u32 check_payload(const __u8 *in, __u32 len) {
  __u32 type = in[LIBRA_WIRE_TYPE_AT];
  __u32 flags = load16(in + LIBRA_WIRE_FLAGS_AT);
  __u32 count = load16(in + LIBRA_WIRE_SLOT_COUNT_AT);
  if (type == LIBRA_WIRE_TYPE_RESULT) {
    if (count > LIBRA_WIRE_MAX_SLOTS) return LIBRA_XDP_DROP_TOO_MANY_SLOTS;
    int saturated_mask = count > 0 && (flags & LIBRA_WIRE_FLAG_SATURATED);
    __u32 expected = count == 0 ? LIBRA_WIRE_HEADER_BYTES
                                : LIBRA_WIRE_HEADER_BYTES +
                                      LIBRA_WIRE_MASK_BYTES * (saturated_mask ? 2 : 1) +
                                      count * LIBRA_WIRE_VALUE_BYTES;
    if (len < expected) return LIBRA_XDP_DROP_TRUNCATED;
    if (len > expected) return LIBRA_XDP_DROP_OVERSIZED;
    if (count == 0) return WELL_FORMED;
    __u64 written = ((__u64)load32(in + 20) << 32) | load32(in + 24);
    if (popcount64(written) != count) return LIBRA_XDP_DROP_BAD_PAYLOAD;
    if (saturated_mask) {
      __u64 saturated = ((__u64)load32(in + 28) << 32) | load32(in + 32);
      if (saturated & ~written) return LIBRA_XDP_DROP_BAD_PAYLOAD;
    }
    return WELL_FORMED;
  }
  if (type == LIBRA_WIRE_TYPE_UPDATE || type == LIBRA_WIRE_TYPE_REPLICA) {
    if (count > LIBRA_WIRE_MAX_UPDATE_VALUES) return LIBRA_XDP_DROP_TOO_MANY_SLOTS;
    if (len > LIBRA_WIRE_MAX_MESSAGE_BYTES) return LIBRA_XDP_DROP_OVERSIZED;
    if (len < LIBRA_WIRE_HEADER_BYTES + LIBRA_WIRE_UPDATE_TAG_BYTES)
      return LIBRA_XDP_DROP_TRUNCATED;
    /* The row blocks, walked: each takes at least 16 bytes. They end where
     * the MAC tag starts; the tag is the hosts' to check, and goes on with
     * the packet as it came. */
    struct block_walk walk = {.len = len - LIBRA_WIRE_UPDATE_TAG_BYTES,
                              .count = count,
                              .offset = LIBRA_WIRE_HEADER_BYTES,
                              .error = WELL_FORMED};
    bpf_loop((LIBRA_WIRE_MAX_MESSAGE_BYTES - LIBRA_WIRE_HEADER_BYTES) / 16 + 1, walk_block, &walk,
             0);
    if (walk.error != WELL_FORMED) return walk.error;
    __u32 seen = walk.seen;
    if (seen != count) return LIBRA_XDP_DROP_TRUNCATED;
    return WELL_FORMED;
  }
  if (count > LIBRA_WIRE_MAX_SLOTS) return LIBRA_XDP_DROP_TOO_MANY_SLOTS;
  __u32 expected = LIBRA_WIRE_HEADER_BYTES + count * LIBRA_WIRE_SLOT_BYTES;
  if (len < expected) return LIBRA_XDP_DROP_TRUNCATED;
  if (len > expected) return LIBRA_XDP_DROP_OVERSIZED;
  return WELL_FORMED;
}

/* --- deparse --- */

/* Lengthens the frame by `delta` bytes at its front, the Ethernet, IPv4
 * and UDP headers moved there, so the payload starts `delta` bytes earlier
 * and may be rewritten at full length. For a frame without the tailroom:
 * native veth XDP copies a frame that arrives as an skb into a page-pool
 * buffer sized for its length (only cache-line slack after it), but always
 * leaves XDP_PACKET_HEADROOM (256 bytes) before it. */
__noinline int grow_at_head(struct xdp_md *ctx, int delta) {
  __u8 headers[PAYLOAD_AT];
  if (!ctx || delta <= 0 || delta > LIBRA_WIRE_MAX_MESSAGE_BYTES) return -1;
  if (bpf_xdp_load_bytes(ctx, 0, headers, PAYLOAD_AT) != 0) return -1;
  if (bpf_xdp_adjust_head(ctx, -delta) != 0) return -1;
  return bpf_xdp_store_bytes(ctx, 0, headers, PAYLOAD_AT) != 0 ? -1 : 0;
}

/* Turns the frame around for an answer of out_len payload bytes: length
 * set (grown at the head when the tailroom is short), MAC, IPv4 and UDP
 * addresses swapped, lengths and IPv4 checksum rewritten. 0, or -1 when
 * the frame must be dropped. The payload's bytes are the caller's. */
static __always_inline int turn_around(struct xdp_md *ctx, __u32 out_len) {
  int delta = (int)(PAYLOAD_AT + out_len) - (int)(ctx->data_end - ctx->data);
  if (delta != 0 && bpf_xdp_adjust_tail(ctx, delta) != 0) {
    if (delta < 0 || grow_at_head(ctx, delta) != 0) {
      bump(LIBRA_XDP_REPLIES_WITHOUT_ROOM);
      return -1;
    }
    bump(LIBRA_XDP_REPLIES_GROWN_AT_HEAD);
  }
  void *data = (void *)(long)ctx->data;
  void *data_end = (void *)(long)ctx->data_end;
  struct ethhdr *eth = data;
  struct iphdr *ip = (void *)(eth + 1);
  struct udphdr *udp = (void *)(ip + 1);
  if ((void *)(udp + 1) > data_end) return -1;
  unsigned char mac[ETH_ALEN];
  __builtin_memcpy(mac, eth->h_dest, ETH_ALEN);
  __builtin_memcpy(eth->h_dest, eth->h_source, ETH_ALEN);
  __builtin_memcpy(eth->h_source, mac, ETH_ALEN);
  __u32 address = ip->saddr;
  ip->saddr = ip->daddr;
  ip->daddr = address;
  ip->tot_len = bpf_htons(sizeof(struct iphdr) + sizeof(struct udphdr) + out_len);
  ip->check = 0;
  __u32 sum = 0;
  __u16 *word = (__u16 *)ip;
#pragma unroll
  for (int i = 0; i < (int)(sizeof(struct iphdr) / 2); i++) sum += word[i];
  sum = (sum & 0xffff) + (sum >> 16);
  sum = (sum & 0xffff) + (sum >> 16);
  ip->check = (__u16)~sum;
  __u16 port = udp->source;
  udp->source = udp->dest;
  udp->dest = port;
  udp->len = bpf_htons(sizeof(struct udphdr) + out_len);
  udp->check = 0; /* none: IPv4 allows it */
  return 0;
}

/* The turned-around frame out by XDP_TX, unless the answer is lost. */
static __always_inline int transmit(void) {
  bump(LIBRA_XDP_PACKETS_OUT);
  __u32 zero = 0;
  struct libra_xdp_job *j = bpf_map_lookup_elem(&job, &zero);
  if (j && inject_loss(j, LIBRA_XDP_LOSS_ANSWERS)) {
    bump(LIBRA_XDP_EGRESS_LOSS_INJECTED);
    return XDP_DROP;
  }
  return XDP_TX;
}

/* Sends phv->out[0, out_len) back to the frame's sender. */
__noinline int reply(struct xdp_md *ctx, __u32 out_len) {
  struct phv *phv = find_phv();
  if (!phv || !ctx) return XDP_DROP;
  if (out_len < LIBRA_WIRE_HEADER_BYTES || out_len > LIBRA_WIRE_MAX_MESSAGE_BYTES) return XDP_DROP;
  if (turn_around(ctx, out_len) != 0) return XDP_DROP;
  if (bpf_xdp_store_bytes(ctx, PAYLOAD_AT, phv->out, out_len) != 0) return XDP_DROP;
  return transmit();
}

/* EmitAck's bytes: the received header with type, flags and slot count
 * rewritten. */
static __always_inline void build_ack(struct phv *phv, __u32 flags) {
  __builtin_memcpy(phv->out, phv->in, LIBRA_WIRE_HEADER_BYTES);
  phv->out[LIBRA_WIRE_TYPE_AT] = LIBRA_WIRE_TYPE_ACK;
  store16(phv->out + LIBRA_WIRE_FLAGS_AT, flags);
  store16(phv->out + LIBRA_WIRE_SLOT_COUNT_AT, 0);
}

/* The header alone, type and flags given, slot count 0 (EmitHeader): the
 * received header rewritten in the frame itself, which holds it already
 * (no copy through the PHV, no bpf_xdp_store_bytes call). A header-only
 * answer never needs more room than its packet had. */
static __always_inline int answer_header(struct xdp_md *ctx, __u32 type, __u32 flags) {
  if (!ctx || turn_around(ctx, LIBRA_WIRE_HEADER_BYTES) != 0) return XDP_DROP;
  void *data = (void *)(long)ctx->data;
  void *data_end = (void *)(long)ctx->data_end;
  __u8 *payload = data + PAYLOAD_AT;
  if ((void *)(payload + LIBRA_WIRE_HEADER_BYTES) > data_end) return XDP_DROP;
  payload[LIBRA_WIRE_TYPE_AT] = type;
  store16(payload + LIBRA_WIRE_FLAGS_AT, flags);
  store16(payload + LIBRA_WIRE_SLOT_COUNT_AT, 0);
  return transmit();
}

__noinline int send_header(struct xdp_md *ctx, __u32 type, __u32 flags) {
  return answer_header(ctx, type, flags);
}

static __always_inline int send_ack(struct xdp_md *ctx, __u32 flags) {
  bump(LIBRA_XDP_ACKS);
  return send_header(ctx, LIBRA_WIRE_TYPE_ACK, flags);
}

/* Hands the payload, its first bytes replaced by phv->out's header when
 * `rewrite`, to the user-space part through the kernel's UDP stack. */
__noinline int upcall(struct xdp_md *ctx, int rewrite) {
  struct phv *phv = find_phv();
  if (!phv || !ctx) return XDP_DROP;
  void *data = (void *)(long)ctx->data;
  void *data_end = (void *)(long)ctx->data_end;
  struct udphdr *udp = data + sizeof(struct ethhdr) + sizeof(struct iphdr);
  if ((void *)(udp + 1) > data_end) return XDP_DROP;
  if (rewrite) {
    udp->check = 0;
    if (bpf_xdp_store_bytes(ctx, PAYLOAD_AT, phv->out, LIBRA_WIRE_HEADER_BYTES) != 0)
      return XDP_DROP;
  }
  bump(LIBRA_XDP_UPCALLS);
  return XDP_PASS;
}

/* --- the paths --- */

/* The packet's parsed fields and each slot loop's running results. */
struct slot_loop {
  __u64 valid;
  __u32 worker, count, epoch, seq;
  __u32 tag, base, arrays, cells;
  __u32 out_of_range, by_row, kept;
  __u64 written_mask, saturated_mask;
};

static __always_inline __u32 valid_at(const struct slot_loop *l, __u32 s) {
  return (l->valid >> s) & 1;
}

/* Admit (COLLECT): slot s's words out of the payload, its valid bit, its
 * range. */
static long load_slot(__u32 s, struct slot_loop *l) {
  struct phv *phv = find_phv();
  if (!phv) return 1;
  s &= LIBRA_XDP_MAX_JOB_SLOTS - 1;
  const __u8 *at = phv->in + LIBRA_WIRE_HEADER_BYTES + s * LIBRA_WIRE_SLOT_BYTES;
  __u32 key = load32(at);
  __u32 index = key & LIBRA_WIRE_SLOT_INDEX_MASK;
  phv->index[s] = index;
  phv->value[s] = load32(at + LIBRA_WIRE_SLOT_VALUE_AT);
  if (key & LIBRA_WIRE_SLOT_VALID_BIT) {
    l->valid |= 1ull << s;
    l->out_of_range |= index >= l->cells;
  }
  return 0;
}

/* A big-endian word of the copied payload at a 4-byte aligned offset, in
 * one load (the slots start at byte 20 and are 8 bytes each). */
/* x as the verifier knows a word read from memory: any value. For results
 * of a loop that a later branch tests (see data_path). */
static __always_inline __u32 forget(struct phv *phv, __u32 x) {
  phv->forget = x;
  return *(volatile __u32 *)&phv->forget;
}

/* A slot without its valid bit, in phv->word (no table word has status 3)
 * and phv->target (beyond any `values` map, so its lookup fails). */
#define WORD_INVALID 0xffffffffu
#define NO_CELL 0xffffffffu

static __always_inline __u32 load32_aligned(const __u8 *p) { return bpf_ntohl(*(const __u32 *)p); }

/* DATA, the whole per-slot work in plain loops inlined into the main
 * program, without a call per slot or for the path (see the register
 * programs on what a call costs); the verifier walks the 32 iterations of
 * each, its states pruned where the paths of an iteration meet again.
 *
 * The first loop admits and classifies: each slot's words out of the
 * payload, its valid bit, its range, whether it keeps the packet on one
 * row, and its conversion status, whose exponent-table word and cell
 * number are kept for the last. Nothing is written but the PHV, so the
 * drop of a packet with an index out of range still comes before any
 * register is touched, and the counts wait for the model's order (dedup
 * first). A second loop reads each slot's cell (see there). The model's
 * aggregate stage decides its counts on whether every valid value
 * converted cleanly, so the last loop, which converts and adds, runs only
 * when that is known.
 *
 * What the verifier must not learn: the loops keep nothing it could
 * branch on as a constant after them (a valid-slot mask in a register, a
 * count tested for zero), since such a branch makes it tell apart every
 * combination the iterations produced (2^32 masks). So an invalid slot is
 * marked in the PHV's memory, which it reads back as unknown, and the
 * counts are added to the counters whether zero or not; what is tested
 * after a loop goes through forget(). */
static __always_inline int data_path(struct xdp_md *ctx, struct slot_loop *packet) {
  struct phv *phv = find_phv();
  __u32 zero = 0;
  struct libra_xdp_job *j = bpf_map_lookup_elem(&job, &zero);
  if (!phv || !j || !packet) return XDP_DROP;
  __u32 worker = packet->worker, count = packet->count, seq = packet->seq, tag = packet->tag;
  __u32 cells = packet->cells;
  if (count > LIBRA_XDP_MAX_JOB_SLOTS || worker >= LIBRA_XDP_MAX_WORKERS) return XDP_DROP;
  const __u8 *slots = phv->in + LIBRA_WIRE_HEADER_BYTES;
  __u32 row = load32_aligned(slots) & LIBRA_WIRE_SLOT_INDEX_MASK;
  /* Slot s adds into its cell of array s. */
  __u32 bank = packet->epoch & 1;
  __u32 base = bank * j->cells_per_array;
  __u32 arrays = j->slots_per_packet;
  __u32 out_of_range = 0, off_row = 0, rejected = 0, saturated_values = 0;
  for (__u32 s = 0; s < count && s < LIBRA_XDP_MAX_JOB_SLOTS; s++) {
    const __u8 *at = slots + s * LIBRA_WIRE_SLOT_BYTES;
    __u32 key = load32_aligned(at);
    __u32 bits = load32_aligned(at + LIBRA_WIRE_SLOT_VALUE_AT);
    __u32 index = key & LIBRA_WIRE_SLOT_INDEX_MASK;
    if (!(key & LIBRA_WIRE_SLOT_VALID_BIT)) {
      phv->word[s] = WORD_INVALID;
      phv->target[s] = NO_CELL;
      off_row = 1;
      continue;
    }
    __u32 exponent = (bits >> 23) & 0xff;
    __u32 *entry = bpf_map_lookup_elem(&to_fixed, &exponent);
    if (!entry) return XDP_DROP; /* cannot be: 256 entries, the index masked */
    __u32 word = *entry;
    __u32 status = (word >> 16) & 3;
    out_of_range |= index >= cells;
    off_row |= index != row;
    rejected += status == STATUS_REJECTED;
    saturated_values += status == STATUS_SATURATED;
    phv->target[s] = (base + index) * arrays + s;
    phv->value[s] = bits;
    phv->word[s] = word;
  }
  if (forget(phv, out_of_range)) {
    bump(LIBRA_XDP_DROP_CELL_INDEX_OUT_OF_RANGE);
    return XDP_DROP;
  }
  /* Each exit of the first loop knows count exactly: remembered, the
   * second loop would be walked once per count (33 times). */
  count = forget(phv, count);
  off_row = forget(phv, off_row);
  rejected = forget(phv, rejected);
  saturated_values = forget(phv, saturated_values);
  /* Every cell read once, only to have its line on the way (BPF has no
   * prefetch): a loop of a few instructions a slot keeps the misses of
   * all slots in flight together, before the first locked instruction
   * (dedup's compare-and-swap) waits for them; the adding loop's
   * compare-and-swaps would take them one after another. */
  if (off_row) {
    /* (A packet on one row has its cells on a few adjacent lines.) */
    for (__u32 s = 0; s < count && s < LIBRA_XDP_MAX_JOB_SLOTS; s++) {
      __u32 target = phv->target[s];
      __u64 *touched = bpf_map_lookup_elem(&values, &target);
      if (touched) (void)*(volatile __u64 *)touched;
    }
    count = forget(phv, count); /* this loop's exits know it again */
  }

  bump(LIBRA_XDP_DATA_PACKETS);
  __u32 dedup = worker * LIBRA_XDP_DEDUP_WINDOW + (seq % LIBRA_XDP_DEDUP_WINDOW);
  __u64 *cell = bpf_map_lookup_elem(&dedup_window, &dedup);
  if (!cell) return XDP_DROP;
  if (!record_seq(cell, tag, seq)) {
    bump(LIBRA_XDP_DATA_DUPLICATES);
    return send_ack(ctx, LIBRA_WIRE_FLAG_DUPLICATE);
  }
  __u32 counted = worker * 2 + bank;
  cell = bpf_map_lookup_elem(&data_count, &counted);
  if (cell) count_in_epoch(cell, tag);

  __u32 all_ok = rejected + saturated_values == 0;
  count_n(LIBRA_XDP_VALUES_REJECTED, rejected);
  count_n(LIBRA_XDP_VALUES_SATURATED, saturated_values);
  if (count != 0 && all_ok && !off_row) bump(LIBRA_XDP_DATA_ONE_ROW);

  __u32 aggregated = 0, stale = 0, saturated_cells = 0;
  for (__u32 s = 0; s < count && s < LIBRA_XDP_MAX_JOB_SLOTS; s++) {
    __u32 word = phv->word[s];
    if (word == WORD_INVALID) continue;
    __u32 bits = phv->value[s];
    __u32 status = (word >> 16) & 3;
    __u32 target = phv->target[s];
    __u64 *value = bpf_map_lookup_elem(&values, &target);
    if (!value) continue;
    int action = accumulate(value, tag, apply_to_fixed(word, bits), status != STATUS_OK);
    if (action == ACTION_KEEP) {
      stale++;
      continue;
    }
    aggregated += all_ok || status != STATUS_REJECTED;
    saturated_cells += (action & ACTION_SATURATED) != 0;
  }
  count_n(LIBRA_XDP_VALUES_AGGREGATED, aggregated);
  count_n(LIBRA_XDP_VALUES_STALE, stale);
  count_n(LIBRA_XDP_SATURATED_CELL_UPDATES, saturated_cells);
  /* The common answer inlined: a call's return costs about 10 ns here. It
   * echoes the DATA's RETRANSMISSION flag: the worker learns whether the
   * copy added was a resend (the first send was lost) or the first send
   * (late, not lost). */
  bump(LIBRA_XDP_ACKS);
  __u32 resent = load16(phv->in + LIBRA_WIRE_FLAGS_AT) & LIBRA_WIRE_FLAG_RETRANSMISSION;
  return answer_header(ctx, LIBRA_WIRE_TYPE_ACK, resent);
}

__noinline int fin_path(struct xdp_md *ctx, __u32 worker, __u32 epoch, __u32 seq) {
  __u32 zero = 0;
  struct libra_xdp_job *j = bpf_map_lookup_elem(&job, &zero);
  if (!j) return XDP_DROP;
  __u32 tag = epoch + 1;
  __u32 bank = epoch & 1;
  bump(LIBRA_XDP_FIN_PACKETS);
  __u32 counted = worker * 2 + bank;
  __u64 *cell = bpf_map_lookup_elem(&data_count, &counted);
  if (!cell) return XDP_DROP;
  int newer = 0, written = 0;
  __u32 seen = read_in_epoch(*(volatile __u64 *)cell, tag, &newer, &written);
  if (newer) {
    bump(LIBRA_XDP_DROP_STALE_EPOCH);
    return XDP_DROP;
  }
  if (seen != seq) {
    bump(LIBRA_XDP_DROP_FIN_COUNT_MISMATCH);
    return XDP_DROP;
  }
  cell = bpf_map_lookup_elem(&fin_seen, &worker);
  if (!cell) return XDP_DROP;
  if (!mark_epoch_once(cell, tag)) {
    bump(LIBRA_XDP_FIN_DUPLICATES);
    return send_ack(ctx, LIBRA_WIRE_FLAG_FIN | LIBRA_WIRE_FLAG_DUPLICATE);
  }
  cell = bpf_map_lookup_elem(&fin_count, &bank);
  if (!cell) return XDP_DROP;
  __u32 finished = count_in_epoch(cell, tag);
  if (finished != j->workers) return send_ack(ctx, LIBRA_WIRE_FLAG_FIN);
  /* The epoch is complete: the ACK and a READY per server go out from user
   * space, which the ACK in place of the FIN tells so. */
  bump(LIBRA_XDP_EPOCHS_READY);
  struct phv *phv = find_phv();
  if (!phv) return XDP_DROP;
  build_ack(phv, LIBRA_WIRE_FLAG_FIN);
  return upcall(ctx, 1);
}

/* COLLECT: the cell slot s asks for, its fixed-point sum as it is, when
 * written in the epoch. The values are written behind room for both masks; whether the
 * saturated one is needed is known only at the end (move_value). */
static long read_slot(__u32 s, struct slot_loop *l) {
  struct phv *phv = find_phv();
  if (!phv) return 1;
  s &= LIBRA_XDP_MAX_JOB_SLOTS - 1;
  __u32 asked = l->by_row ? 0 : s;
  if (!valid_at(l, asked)) return 0;
  __u32 at = (l->base + phv->index[asked]) * l->arrays + s;
  __u64 *value = bpf_map_lookup_elem(&values, &at);
  if (!value) return 0;
  __u64 seen = *(volatile __u64 *)value;
  int newer = 0, written = 0;
  __u32 sum = read_in_epoch(seen, l->tag, &newer, &written);
  if (!written) return 0;
  l->written_mask |= 1ull << s;
  if (LIBRA_XDP_CELL_HI(seen) & LIBRA_XDP_SATURATED_TAG_BIT) l->saturated_mask |= 1ull << s;
  __u32 kept = l->kept & (LIBRA_XDP_MAX_JOB_SLOTS - 1);
  store32(phv->out + LIBRA_WIRE_HEADER_BYTES + 2 * LIBRA_WIRE_MASK_BYTES +
              kept * LIBRA_WIRE_VALUE_BYTES,
          sum);
  l->kept++;
  return 0;
}

static long move_value(__u32 v, void *unused) {
  struct phv *phv = find_phv();
  if (!phv) return 1;
  v &= LIBRA_XDP_MAX_JOB_SLOTS - 1;
  __u8 *to = phv->out + LIBRA_WIRE_HEADER_BYTES + LIBRA_WIRE_MASK_BYTES + v * 4;
  store32(to, load32(to + LIBRA_WIRE_MASK_BYTES));
  return 0;
}

__noinline int collect_path(struct xdp_md *ctx, struct slot_loop *packet, __u32 count, __u32 flags,
                            __u32 epoch) {
  struct phv *phv = find_phv();
  __u32 zero = 0;
  struct libra_xdp_job *j = bpf_map_lookup_elem(&job, &zero);
  if (!phv || !j || !packet) return XDP_DROP;
  struct slot_loop loop = *packet;
  struct slot_loop *l = &loop;
  count &= 63;
  __u32 tag = l->tag;
  __u32 bank = epoch & 1;
  bump(LIBRA_XDP_COLLECT_PACKETS);
  __u64 *cell = bpf_map_lookup_elem(&fin_count, &bank);
  if (!cell) return XDP_DROP;
  int newer = 0, written = 0;
  __u32 finished = read_in_epoch(*(volatile __u64 *)cell, tag, &newer, &written);
  if (newer) {
    bump(LIBRA_XDP_DROP_STALE_EPOCH);
    return XDP_DROP;
  }
  if (finished != j->workers) {
    bump(LIBRA_XDP_COLLECT_NOT_READY);
    return send_header(ctx, LIBRA_WIRE_TYPE_RESULT, LIBRA_WIRE_FLAG_NOT_READY);
  }
  /* A ROW request names one row in slot 0: that cell of every array. */
  l->by_row = (flags & LIBRA_WIRE_FLAG_ROW) != 0;
  __u32 reads = l->by_row ? (count > 0 ? j->slots_per_packet : 0) : count;
  l->base = bank * j->cells_per_array;
  l->arrays = j->slots_per_packet;
  bpf_loop(reads, read_slot, l, 0);
  __u32 kept = l->kept & 63;
  __u64 written_mask = l->written_mask;
  __u64 saturated_mask = l->saturated_mask;
  __builtin_memcpy(phv->out, phv->in, LIBRA_WIRE_HEADER_BYTES);
  phv->out[LIBRA_WIRE_TYPE_AT] = LIBRA_WIRE_TYPE_RESULT;
  __u32 result_flags = saturated_mask ? LIBRA_WIRE_FLAG_SATURATED : 0;
  store16(phv->out + LIBRA_WIRE_FLAGS_AT, result_flags);
  store16(phv->out + LIBRA_WIRE_SLOT_COUNT_AT, kept);
  __u32 length = LIBRA_WIRE_HEADER_BYTES;
  if (kept > 0) {
    store64(phv->out + LIBRA_WIRE_HEADER_BYTES, written_mask);
    if (saturated_mask) {
      store64(phv->out + LIBRA_WIRE_HEADER_BYTES + LIBRA_WIRE_MASK_BYTES, saturated_mask);
      length += 2 * LIBRA_WIRE_MASK_BYTES;
    } else {
      /* No saturated mask: the values move up by one mask. */
      bpf_loop(kept, move_value, NULL, 0);
      length += LIBRA_WIRE_MASK_BYTES;
    }
    length += kept * LIBRA_WIRE_VALUE_BYTES;
  }
  bump(LIBRA_XDP_RESULTS_SENT);
  if (result_flags) bump(LIBRA_XDP_RESULTS_SATURATED);
  return reply(ctx, length);
}

/* A DATA packet of 32 slots, training's common packet. */
#define FULL_DATA_BYTES (LIBRA_WIRE_HEADER_BYTES + LIBRA_XDP_MAX_JOB_SLOTS * LIBRA_WIRE_SLOT_BYTES)

/* The payload of FULL_DATA_BYTES copied into the PHV by plain loads from
 * the frame (x86 takes them unaligned), not a call of bpf_xdp_load_bytes;
 * 0 when the frame is shorter. */
static __always_inline int copy_full_data(const void *payload, const void *data_end, __u8 *to) {
  if (payload + FULL_DATA_BYTES > data_end) return 0;
  const __u64 *from = payload;
#pragma unroll
  for (int i = 0; i < FULL_DATA_BYTES / 8; i++) ((__u64 *)to)[i] = from[i];
  *(__u32 *)(to + FULL_DATA_BYTES - 4) = *(const __u32 *)(payload + FULL_DATA_BYTES - 4);
  return 1;
}

SEC("xdp")
int libra_switch(struct xdp_md *ctx) {
  void *data = (void *)(long)ctx->data;
  void *data_end = (void *)(long)ctx->data_end;
  struct ethhdr *eth = data;
  struct iphdr *ip = (void *)(eth + 1);
  struct udphdr *udp = (void *)(ip + 1);
  __u32 zero = 0;
  struct libra_xdp_job *j = bpf_map_lookup_elem(&job, &zero);
  if (!j) return XDP_PASS;
  /* Only IPv4/UDP without options or fragments to the switch's address is
   * the switch's; everything else goes to the kernel as if XDP were not
   * there. */
  if ((void *)(udp + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP) || ip->ihl != 5 ||
      ip->protocol != IPPROTO_UDP || (ip->frag_off & bpf_htons(0x3fff)) != 0 ||
      udp->dest != j->switch_port || (j->switch_ipv4 != 0 && ip->daddr != j->switch_ipv4)) {
    bump(LIBRA_XDP_NOT_SWITCH_TRAFFIC);
    return XDP_PASS;
  }
  /* Loss on arrival, before the program sees the packet (as switchd's). */
  if (inject_loss(j, LIBRA_XDP_LOSS_ARRIVALS)) {
    bump(LIBRA_XDP_INGRESS_LOSS_INJECTED);
    return XDP_DROP;
  }
  bump(LIBRA_XDP_PACKETS_IN);
  __u32 frame_payload = (__u32)(data_end - data) - PAYLOAD_AT;
  __u32 udp_length = bpf_ntohs(udp->len);
  if (udp_length < sizeof(struct udphdr) || udp_length - sizeof(struct udphdr) > frame_payload) {
    bump(LIBRA_XDP_DROP_TRUNCATED);
    return XDP_DROP;
  }
  /* The payload's length is the UDP header's: a short frame may carry
   * Ethernet padding after it. */
  __u32 len = udp_length - sizeof(struct udphdr);
  struct libra_xdp_peer_key source = {ip->saddr, udp->source, 0};

  struct phv *phv = bpf_map_lookup_elem(&scratch, &zero);
  if (!phv) return XDP_DROP;
  if (len < LIBRA_WIRE_HEADER_BYTES) {
    bump(LIBRA_XDP_DROP_TRUNCATED);
    return XDP_DROP;
  }
  __u32 copy = len > LIBRA_WIRE_MAX_MESSAGE_BYTES ? LIBRA_WIRE_MAX_MESSAGE_BYTES : len;
  if (len != FULL_DATA_BYTES || !copy_full_data(udp + 1, data_end, phv->in)) {
    if (bpf_xdp_load_bytes(ctx, PAYLOAD_AT, phv->in, copy) != 0) return XDP_DROP;
  }
  const __u8 *in = phv->in;
  if (in[LIBRA_WIRE_VERSION_AT] != LIBRA_WIRE_VERSION) {
    bump(LIBRA_XDP_DROP_BAD_VERSION);
    return XDP_DROP;
  }
  __u32 type = in[LIBRA_WIRE_TYPE_AT];
  if (type == 0 || type > LIBRA_WIRE_LAST_TYPE) {
    bump(LIBRA_XDP_DROP_UNKNOWN_TYPE);
    return XDP_DROP;
  }
  /* switchd --die-at-epoch: the first DATA of that epoch goes up to switchd,
   * which kills itself on reading it (its XDP links go with it). */
  if (type == LIBRA_WIRE_TYPE_DATA && j->die_epoch_plus_one != 0 &&
      load32(in + LIBRA_WIRE_EPOCH_AT) + 1 == j->die_epoch_plus_one)
    return upcall(ctx, 0);
  __u32 malformed = check_payload(in, len);
  if (malformed != WELL_FORMED) {
    bump(malformed);
    return XDP_DROP;
  }
  __u32 flags = load16(in + LIBRA_WIRE_FLAGS_AT);
  __u32 job_id = load32(in + LIBRA_WIRE_JOB_ID_AT);
  __u32 node = load16(in + LIBRA_WIRE_NODE_ID_AT);
  __u32 count = load16(in + LIBRA_WIRE_SLOT_COUNT_AT);
  __u32 epoch = load32(in + LIBRA_WIRE_EPOCH_AT);
  __u32 seq = load32(in + LIBRA_WIRE_SEQ_AT);
  if (flags & LIBRA_WIRE_FLAG_RETRANSMISSION) bump(LIBRA_XDP_RETRANSMISSIONS);

  /* Admit: the model's checks, in its order. */
  if (type == LIBRA_WIRE_TYPE_PROBE) {
    bump(LIBRA_XDP_PROBES);
    return send_header(ctx, LIBRA_WIRE_TYPE_PROBE_REPLY, flags);
  }
  if (!j->installed) {
    bump(LIBRA_XDP_DROP_NO_JOB);
    return XDP_DROP;
  }
  if (job_id != j->job_id) {
    bump(LIBRA_XDP_DROP_WRONG_JOB);
    return XDP_DROP;
  }
  /* Addresses are unique in a job, so a DATA packet from its node id's
   * worker address has the peer table's answer: that worker. */
  __u32 role = LIBRA_XDP_ROLE_WORKER, id = node;
  struct libra_xdp_worker_address *address = NULL;
  if (type == LIBRA_WIRE_TYPE_DATA) address = bpf_map_lookup_elem(&worker_addresses, &id);
  if (!address || !address->installed || address->ipv4 != source.ipv4 ||
      address->port != source.port) {
    struct libra_xdp_peer *peer = bpf_map_lookup_elem(&peers, &source);
    if (!peer) {
      bump(LIBRA_XDP_DROP_UNKNOWN_PEER);
      return XDP_DROP;
    }
    role = peer->role;
    id = peer->id;
  }
  int from_worker = role == LIBRA_XDP_ROLE_WORKER;
  int takes_slots = (type == LIBRA_WIRE_TYPE_DATA && from_worker) ||
                    (type == LIBRA_WIRE_TYPE_COLLECT && !from_worker);
  int known = takes_slots || (type == LIBRA_WIRE_TYPE_FIN && from_worker) ||
              (type == LIBRA_WIRE_TYPE_UPDATE && !from_worker);
  if (!known) {
    bump(LIBRA_XDP_DROP_UNEXPECTED_TYPE);
    return XDP_DROP;
  }
  if (node != id) {
    bump(LIBRA_XDP_DROP_NODE_ID_MISMATCH);
    return XDP_DROP;
  }
  if (epoch > LIBRA_XDP_MAX_EPOCH) {
    bump(LIBRA_XDP_DROP_EPOCH_OUT_OF_RANGE);
    return XDP_DROP;
  }
  /* An UPDATE's row blocks are not slots: nothing below looks at them. */
  __u32 slots = type == LIBRA_WIRE_TYPE_UPDATE ? 0 : count;
  __u32 max_slots = takes_slots ? j->slots_per_packet : 0;
  if (slots > max_slots || slots > LIBRA_XDP_MAX_JOB_SLOTS) {
    bump(LIBRA_XDP_DROP_TOO_MANY_SLOTS);
    return XDP_DROP;
  }
  /* The slots, and which valid ones address a cell out of range; a packet
   * is dropped whole before any register is touched. */
  struct slot_loop l = {.worker = id,
                        .count = slots,
                        .epoch = epoch,
                        .seq = seq,
                        .tag = epoch + 1,
                        .cells = j->cells_per_array};
  if (type == LIBRA_WIRE_TYPE_DATA) return data_path(ctx, &l);
  bpf_loop(slots, load_slot, &l, 0);
  if (l.out_of_range) {
    bump(LIBRA_XDP_DROP_CELL_INDEX_OUT_OF_RANGE);
    return XDP_DROP;
  }

  if (type == LIBRA_WIRE_TYPE_FIN) return fin_path(ctx, id, epoch, seq);
  if (type == LIBRA_WIRE_TYPE_COLLECT) return collect_path(ctx, &l, slots, flags, epoch);
  /* UPDATE: the copies to every worker and the ACK leave from user space. */
  bump(LIBRA_XDP_UPDATE_PACKETS);
  return upcall(ctx, 0);
}
