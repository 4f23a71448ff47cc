// Where a hot epoch's time goes, across the job's processes. With LIBRA_TRACE
// set, each node writes one line to stderr per event of each hot epoch:
//
//   TRACE <event> <node> <epoch> <nanoseconds of CLOCK_MONOTONIC>
//
// CLOCK_MONOTONIC is one clock for every process of a machine, so the lines
// of a job on one host (`libra train`, which prefixes each node's output)
// line up; scripts/epoch_timeline.py prints each event's median time after
// worker 0 began the epoch's push. Events, in the order an epoch meets them:
//   worker (node = its rank): push (the push began), packed (its DATA are
//     handed to the sender), fin_acked, replica_first (the first REPLICA of
//     the epoch's stream from server 0 came), replica (the epoch's REPLICA
//     stream is complete), hot_read (its next pull has the epoch's hot
//     values), hot_done (the pull's hot part handed over);
//   server (node = its rank): reports_in (every worker's WRITTEN_KEYS of
//     the epoch are in, and the COLLECTs planned), ready, collecting (the
//     COLLECTs go out), collected, dispatched (the thread that applies it
//     took it), checked (the sum check passed), applied (the handle stepped
//     the epoch and answered its values), published (the UPDATE packets are
//     queued), update_sent (the first of them went out).
// `libra train` adds its cold chain: round_applied (a server applied the
// workers' pushes of the epoch), pushed (the worker's push returned) and
// pulled (the worker's next pull returned, cold and hot values merged).
// Off, an event costs a getenv (about 19 an epoch on the hot path, and 3 an
// iteration in `libra train`, plain or not: one in the server's round).
#pragma once

#include <cstdint>

namespace libra::hotpath {

bool EpochTraceOn();
void TraceEpoch(const char* event, int node, std::uint32_t epoch);

}  // namespace libra::hotpath
