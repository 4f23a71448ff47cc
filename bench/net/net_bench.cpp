// The CPU one hot-path datagram costs on loopback, kernel included: one
// thread sends a batch of full-size datagrams (574 bytes on the wire, 532
// of UDP payload) to a socket of its own and reads them back, as the
// engines do (sendmmsg and recvmmsg; with segmentation, UDP GSO runs read
// back coalesced by UDP GRO). On loopback the sender's system call also
// delivers the datagram to the receiving socket, so the time per datagram
// is the whole of a send and a receive: what a host pays for each packet
// it sends and another host (or switchd) pays for taking it, when both
// share this machine's cores.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "net/udp_socket.h"

namespace libra::net {
namespace {

constexpr std::size_t kPayloadBytes = 532;

// Arguments: datagrams per batch, segmentation (0 or 1).
void BM_LoopbackDatagram(benchmark::State& state) {
  const auto batch = static_cast<std::size_t>(state.range(0));
  const bool segmentation = state.range(1) != 0;
  const UdpEndpoint loopback{0x7f000001, 0};
  UdpSocket sender(loopback);
  UdpSocket receiver(loopback);
  receiver.SetReceiveTimeout(1000);
  const bool coalesced = segmentation && receiver.EnableReceiveCoalescing();
  if (segmentation && !coalesced) {
    state.SkipWithError("the kernel cannot coalesce received UDP (UDP_GRO)");
    return;
  }
  SendQueue queue(sender.fd(), batch, segmentation);
  ReceiveBatch received(batch, coalesced);
  const std::vector<std::uint8_t> payload(kPayloadBytes, 0x5a);
  std::uint64_t datagrams = 0;
  for (auto _ : state) {
    for (std::size_t i = 0; i < batch; ++i) queue.Push(payload, receiver.local());
    queue.Flush();
    std::size_t got = 0;
    while (got < batch) {
      const std::size_t n = received.ReceiveWaiting(receiver.fd());
      if (n == 0) {
        state.SkipWithError("a datagram was lost on loopback");
        return;
      }
      got += n;
    }
    datagrams += got;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(datagrams));
  state.counters["ns_per_datagram"] = benchmark::Counter(
      static_cast<double>(datagrams), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_LoopbackDatagram)
    ->ArgNames({"batch", "segmentation"})
    ->Args({1, 0})
    ->Args({32, 0})
    ->Args({32, 1})
    ->Args({64, 1});

}  // namespace
}  // namespace libra::net

BENCHMARK_MAIN();
