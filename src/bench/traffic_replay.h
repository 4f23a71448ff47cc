// A benchmark's traffic (program_benchmark.h's BenchTraffic) sent to a real
// switch over UDP, as workers send it: each worker keeps a window of
// un-ACKed DATA packets in flight, resends what is not ACKed in time, and
// the workers advance epoch by epoch together (every worker's packets of
// epoch r are ACKed before any worker sends epoch r + 1, as workers that
// their servers synchronise do), so the switch sees every packet once, in
// the epoch it belongs to. Round r replays traffic.epochs[r % size] as
// epoch r, the epoch field patched in place.
//
// The sockets are the caller's: a benchmark across network namespaces makes
// each worker's socket in its host's namespace (cluster/netns_cluster.h).
#pragma once

#include <cstdint>
#include <vector>

#include "bench/program_benchmark.h"
#include "net/udp_socket.h"

namespace libra::bench {

struct ReplayOptions {
  int window = 64;       // un-ACKed DATA packets per worker
  int threads = 1;       // worker w is sent by thread w % threads
  double seconds = 3.0;  // whole epochs, until at least this long
  int resend_after_ms = 20;
  // No ACK at all for this long ends the run with `stalled` set.
  int give_up_after_ms = 2000;
};

struct ReplayTotals {
  std::uint64_t packets_acked = 0;  // distinct DATA packets ACKed
  std::uint64_t packets_sent = 0;   // including resends
  std::uint64_t epochs = 0;
  double seconds = 0;
  bool stalled = false;
};

// Sends `traffic` from worker_sockets[w] (worker w of the traffic, whose
// address the switch's job lists) to `to`. Throws std::invalid_argument if
// the traffic has no packets, a packet is not DATA, or a worker's seqs in an
// epoch are not 0, 1, 2, ...
ReplayTotals ReplayTraffic(const dataplane::BenchTraffic& traffic,
                           const std::vector<net::UdpSocket*>& worker_sockets,
                           const UdpEndpoint& to, const ReplayOptions& options);

}  // namespace libra::bench
