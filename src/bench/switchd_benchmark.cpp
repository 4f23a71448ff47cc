#include "bench/switchd_benchmark.h"

#include <pthread.h>

#include <atomic>
#include <bit>
#include <chrono>
#include <ctime>
#include <stdexcept>
#include <thread>
#include <vector>

#include "hotpath/controller/switch_control_client.h"
#include "net/udp_socket.h"
#include "switchd/switch_daemon.h"

namespace libra::switchd {
namespace {

using Clock = std::chrono::steady_clock;
using net::ReceiveBatch;
using net::SendQueue;
using net::UdpSocket;

struct SenderTotals {
  std::uint64_t acked = 0;
  std::uint64_t sent = 0;
};

// One worker pushing DATA as fast as its window allows, in one epoch. Every
// system call moves a batch: the window's new packets go out in one sendmmsg
// and each recvmmsg waits for the first ACK and takes all that are queued,
// so the sender costs little next to the switch it measures.
SenderTotals RunSender(UdpSocket& socket, const UdpEndpoint& sw, std::uint16_t worker,
                       const SwitchdBenchmarkOptions& options, Clock::time_point deadline) {
  wire::Header header;
  header.type = wire::MessageType::kData;
  header.job_id = 1;
  header.node_id = worker;
  header.slot_count = static_cast<std::uint16_t>(options.slots_per_packet);
  std::array<wire::Slot, wire::kMaxSlots> slots{};
  std::array<std::uint8_t, wire::kMaxMessageBytes> packet{};
  const std::size_t length = wire::EncodedSize(header.slot_count);

  const auto window = static_cast<std::uint32_t>(options.window);
  std::vector<bool> acked(window, false);
  std::uint32_t base = 0;  // lowest un-ACKed seq
  std::uint32_t next = 0;  // next new seq
  // The window leaves as one segmented send and the ACKs come back
  // coalesced, as a tuned worker would do it.
  SendQueue send(socket.fd(), window, /*segmentation=*/true);
  ReceiveBatch receive(window, socket.EnableReceiveCoalescing());
  socket.SetReceiveTimeout(5);
  SenderTotals totals;
  auto emit = [&](std::uint32_t seq, bool retransmission) {
    header.seq = seq;
    header.flags = retransmission ? wire::kFlagRetransmission : 0;
    for (int j = 0; j < options.slots_per_packet; ++j) {
      slots[j] = {true, false, (seq * 7 + static_cast<std::uint32_t>(j)) % options.cells_per_array,
                  std::bit_cast<std::uint32_t>(0.001f * static_cast<float>(j + 1))};
    }
    wire::Encode(header, slots, packet);
    send.Push({packet.data(), length}, sw);
    ++totals.sent;
  };

  auto last_progress = Clock::now();
  while (true) {
    while (next < base + window) emit(next++, false);
    send.Flush();
    const std::size_t n = receive.ReceiveWaiting(socket.fd());
    for (std::size_t i = 0; i < n; ++i) {
      wire::Header ack;
      if (wire::DecodeHeader(receive.payload(i), &ack) != wire::DecodeError::kNone ||
          ack.type != wire::MessageType::kAck || ack.seq < base || ack.seq >= next) {
        continue;
      }
      if (!acked[ack.seq % window]) {
        acked[ack.seq % window] = true;
        ++totals.acked;
      }
    }
    while (base < next && acked[base % window]) acked[base++ % window] = false;
    const auto now = Clock::now();
    if (now >= deadline) break;
    if (n > 0) {
      last_progress = now;
    } else if (now - last_progress > std::chrono::milliseconds(20)) {
      for (std::uint32_t seq = base; seq < next; ++seq) {
        if (!acked[seq % window]) emit(seq, true);
      }
      send.Flush();
      last_progress = now;
    }
  }
  return totals;
}

double CpuSeconds(clockid_t clock) {
  timespec now{};
  ::clock_gettime(clock, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

}  // namespace

SwitchdBenchmarkResult RunSwitchdBenchmark(const SwitchdBenchmarkOptions& options) {
  SwitchdOptions switch_options;
  switch_options.listen = {0x7f000001, 0};
  switch_options.control = {0x7f000001, 0};
  if (options.window < 1 || options.window > switch_options.profile.dedup_window) {
    throw std::invalid_argument("window must be in [1, " +
                                std::to_string(switch_options.profile.dedup_window) + "]");
  }
  SwitchDaemon daemon(switch_options);
  std::atomic<bool> stop{false};
  std::thread switch_thread([&] { daemon.Run(stop); });
  clockid_t switch_clock{};
  ::pthread_getcpuclockid(switch_thread.native_handle(), &switch_clock);

  std::vector<std::unique_ptr<UdpSocket>> sockets;
  SwitchJob job;
  job.job_id = 1;
  job.token = "bench";
  for (int s = 0; s < options.senders; ++s) {
    sockets.push_back(std::make_unique<UdpSocket>(UdpEndpoint{0x7f000001, 0}));
    job.workers.push_back(sockets.back()->local());
  }
  job.servers.push_back({0x7f000001, 9});
  job.cells_per_array = options.cells_per_array;
  job.slots_per_packet = options.slots_per_packet;
  hotpath::SwitchControlClient control(daemon.control_endpoint());
  SwitchdBenchmarkResult result;
  try {
    control.InstallJob(job);
    const double switch_cpu_start = CpuSeconds(switch_clock);
    const double process_cpu_start = CpuSeconds(CLOCK_PROCESS_CPUTIME_ID);
    const auto start = Clock::now();
    const auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(options.seconds));
    std::vector<SenderTotals> totals(static_cast<std::size_t>(options.senders));
    std::vector<std::thread> senders;
    for (int s = 0; s < options.senders; ++s) {
      senders.emplace_back([&, s] {
        totals[s] = RunSender(*sockets[s], daemon.data_endpoint(), static_cast<std::uint16_t>(s),
                              options, deadline);
      });
    }
    for (auto& t : senders) t.join();
    result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    result.switch_cpu_seconds = CpuSeconds(switch_clock) - switch_cpu_start;
    result.process_cpu_seconds = CpuSeconds(CLOCK_PROCESS_CPUTIME_ID) - process_cpu_start;
    for (const auto& t : totals) {
      result.packets_acked += t.acked;
      result.packets_sent += t.sent;
    }
    const nlohmann::json counters = control.Counters();
    result.switch_data_packets = counters["events"]["data_packets"].get<std::uint64_t>();
    result.switch_values_aggregated = counters["events"]["values_aggregated"].get<std::uint64_t>();
  } catch (...) {
    stop = true;
    switch_thread.join();
    throw;
  }
  stop = true;
  switch_thread.join();
  result.packets_per_second = static_cast<double>(result.packets_acked) / result.seconds;
  result.packets_per_switch_cpu_second =
      static_cast<double>(result.packets_acked) / result.switch_cpu_seconds;
  result.values_per_second =
      result.packets_per_second * static_cast<double>(options.slots_per_packet);
  return result;
}

}  // namespace libra::switchd
