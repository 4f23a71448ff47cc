// The hot set that pays, or none: a per-epoch cost model of the two paths a
// hot key can take, and the choice of the hot set that minimises it.
//
// From the sampling phase the controller knows, per key, how often it is
// pushed per epoch and by how many workers (at its expected rate:
// sampled_rates.h). For a candidate set H (a prefix of the keys in order of
// pushes) the model predicts the whole epoch's time on each path:
//   plain PS: every key's pushes and pulls as key-value pairs over the
//     servers' and workers' links, plus the servers' CPU per value;
//   Libra:    the keys outside H as on the plain PS, sharing the links with
//     H's traffic: the DATA packets from each worker; at the servers, the
//     COLLECT and RESULT packets that read the epoch's written values (P to
//     a packet, as DATA are packed; never more than reading every row) and
//     the UPDATE packets that publish them (row blocks of the written rows);
//     the REPLICA packets to each worker; the hosts' and the switch's CPU per
//     packet, plus a fixed latency per epoch (the FIN -> READY -> COLLECT ->
//     RESULT -> UPDATE -> REPLICA chain).
// Each path's time is its busiest link direction or processor, as the
// pieces overlap: links are full duplex, and the hot path moves bytes off
// the servers' links onto the workers', which the plain PS leaves half idle.
// The set with the largest predicted saving wins; none when no candidate
// saves more than `min_saving` of the plain epoch (docs/hot-parameters.md,
// "The cost model", gives the constants and where they were measured).
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "hot/hot_set.h"

namespace libra::hot {

// What the cost of a packet, a value and an epoch is on this system. The
// defaults are measured on the software switch on one 2-core machine; a
// hardware switch has a far smaller epoch latency and switch cost.
struct CostConstants {
  double epoch_latency_s = 1e-3;     // the hot path's round trips per epoch
  double host_packet_s = 4e-6;       // a host's CPU to send or receive one hot packet
  double switch_packet_s = 1.5e-6;   // the switch's CPU per packet (receive, program, send)
  double plain_value_s = 40e-9;      // a server's CPU per key-value pair pushed or pulled
  double packet_bytes = 532 + 42;    // a full hot packet on the wire (UDP/IP/Ethernet)
  double packing_utilisation = 0.7;  // values per DATA packet / slots
  // The share of the shorter of the hot path's link time and its CPU time
  // (the busier of the per-processor and the shared-core terms) that the
  // longer does not hide: each phase's packets are handled as they arrive,
  // and the next phase waits for the last of them. Fitted on forced and
  // chosen sets (docs/hot-parameters.md); 0 would be perfect overlap.
  double serial_share = 0.2;
  // A set must be predicted to save this share of the plain epoch. The
  // model errs by more than a few percent: on the emulated cluster sets
  // predicted to save 5-8 % measured 0.82-1.19x of the plain PS, those
  // predicted to save 10 % or more never below 1.06x (docs/hot-parameters.md).
  double min_saving = 0.10;
  // Of the sets that pay, the smallest whose predicted saving is within
  // this share of the plain epoch of the largest saving: where the model
  // cannot tell sets apart, the smaller one costs less CPU, fewer packets
  // and a shorter INSTALL, which it prices only in part (at 500 Mbit/s
  // LR skewed-full, 4 x 1: 29,557 keys predicted 1.21x, measured
  // 0.82-0.98x; 16,384 keys, predicted within 1 % of it, 1.00-1.17x).
  double prefer_smaller_within = 0.02;
};

// One sampled key.
struct KeySample {
  Key key = 0;
  uint32_t value_len = 1;
  double pushes_per_epoch = 0;  // pushes carrying it per epoch, over all workers
};

struct CostInput {
  std::vector<KeySample> keys;  // any order
  uint32_t num_workers = 1;
  uint32_t num_servers = 1;
  uint32_t slots_per_packet = 32;  // P: values of one row, one per register array
  uint64_t capacity_values = 0;    // the most values the switch holds
  double link_bytes_per_s = 0;     // every host's link; 0: unknown (taken as 10 Gbit/s)
  // The pushes (and their values) per epoch, all workers, of the keys not in
  // `keys` (too rare to sample, or beyond the switch): they load the links
  // on both paths.
  double other_pushes_per_epoch = 0;
  double other_values_per_epoch = 0;
  // Cores that every host and the switch share (all on one machine: a
  // local job, or the emulated cluster); 0: each has its own. Then the hot
  // path's packets, at every host and the switch, are CPU the plain PS does
  // not spend, and together they must fit these cores.
  double shared_cores = 0;
  // A plain epoch as measured on this job (the controller: the workers'
  // median time between pushes while sampling, which runs plain); 0:
  // unknown. When given it is the plain path's time, and what it holds
  // beyond the predicted plain epoch (the workers' compute, and whatever
  // the model does not see) is taken to be on the hot path too: Libra's
  // epoch is that remainder plus the predicted hot-path epoch. A model
  // that overrates the plain path so gives the hot path no credit for it.
  double measured_plain_epoch_s = 0;
  CostConstants constants;
};

// The predicted per-epoch cost of one candidate set.
struct CostPrediction {
  size_t keys = 0;  // the set: the `keys` most pushed keys
  uint64_t values = 0;
  double written_values = 0;           // values some worker pushes in an epoch
  double written_rows = 0;             // rows of P cells with a written value
  double row_reads = 0;                // of them, read whole: at least half written
  double collect_packets = 0;          // COLLECTs (and RESULTs) per epoch, all servers
  double update_packets = 0;           // UPDATEs per epoch, all servers (REPLICAs per worker)
  double plain_server_bytes = 0;       // the set's pairs per server link, both directions
  double plain_worker_bytes = 0;       // the set's pairs per worker link, both directions
  double libra_server_bytes = 0;       // RESULT + UPDATE per server link (+ COLLECT)
  double libra_worker_bytes = 0;       // DATA + REPLICA per worker link
  double libra_server_packets = 0;     // per server
  double libra_worker_packets = 0;     // per worker
  double libra_switch_packets = 0;     // through the switch
  double plain_seconds = 0;            // the epoch on the plain PS (measured when known)
  double libra_seconds = 0;            // the epoch with the set on the hot path
  double predicted_plain_seconds = 0;  // the plain epoch as the model predicts it
  double unmodelled_seconds = 0;       // measured_plain_epoch_s beyond that (0 without it)
  // libra_seconds is the unmodelled part, the latency and the longest of:
  double libra_link_seconds = 0;        // the busiest link direction and the servers' cold CPU
  double libra_cpu_seconds = 0;         // the busiest processor's hot packets
  double libra_shared_cpu_seconds = 0;  // every hot packet over the shared cores
  double latency_seconds = 0;           // the hot path's fixed latency
  double saving_seconds() const { return plain_seconds - libra_seconds; }
  double predicted_speedup() const { return libra_seconds > 0 ? plain_seconds / libra_seconds : 1; }
};

struct CostChoice {
  CostPrediction chosen;                   // keys == 0: run plain
  std::vector<CostPrediction> candidates;  // every set tried, smallest first
  std::vector<KeySample> ordered;          // the keys, most pushed first
  std::string why;                         // one line a job report can show
};

// The prediction for the `keys` first of `ordered` (sorted, most pushed first).
CostPrediction PredictCost(const CostInput& input, const std::vector<KeySample>& ordered,
                           size_t keys);

// The prediction for every key of `input` as the set (a forced set).
CostPrediction PredictWholeSet(const CostInput& input);

// One line a report can show: the set, both paths' epochs and the speedup.
std::string DescribePrediction(const CostPrediction& p);

// Every figure of the prediction, per epoch, as a report's JSON object (the
// controller's job report and `libra bench cluster`'s, so that both can be
// checked against the epochs they measured).
nlohmann::json PredictionJson(const CostPrediction& p);

// Tries the empty set and sets of growing size (doubling from 256 keys, and
// every key that fits) and keeps the one with the largest saving.
CostChoice ChooseByCost(const CostInput& input);

// The choice of no set when the hot path's floor already rules out every
// set, else nothing. Every set's epoch holds the hot path's fixed latency,
// what the measured plain epoch holds beyond the model's (both paths pay
// it), and a busiest term no smaller than where the servers' steps of the
// values left to them and the hot packets of the values taken off them
// balance; none of them depends on which keys the set takes, only on the
// job and on all pushes together, so `input` may carry every push in
// `other_*` and no key. (It takes a key to be in a worker's push at most
// once, as PS-lite's pushes are.) When that floor leaves less than
// `min_saving` of the plain epoch, ChooseByCost would choose no set: the
// controller asks this before ranking the sampled keys, which every worker
// may be waiting for.
std::optional<CostChoice> NoSetCanPay(const CostInput& input);

}  // namespace libra::hot
