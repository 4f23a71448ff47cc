// The UDP socket of the hot path's engines (HotSender on a worker,
// HotCollector on a server), on the batched socket layer of src/net.
#pragma once

#include "net/udp_socket.h"

namespace libra::hotpath {

// Non-blocking: an engine's I/O thread never waits in a send; a datagram the
// kernel cannot queue counts as lost and is retransmitted like any loss.
// Bursts of DATA, COLLECT or REPLICA packets should queue rather than drop:
// 4 MiB each way (without CAP_NET_ADMIN the kernel caps the request at
// net.core.[rw]mem_max, often 208 KiB, less than a window of COLLECTs).
// Marked low-delay (UdpSocketOptions::tos), like switchd's answers.
inline net::UdpSocketOptions EngineSocketOptions() {
  return net::UdpSocketOptions{
      .buffer_bytes = 4 << 20, .non_blocking = true, .tos = net::kHotPathTos};
}

}  // namespace libra::hotpath
