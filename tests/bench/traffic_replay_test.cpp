// The generator of `libra bench switchd --dataplane`: traffic replayed to a
// switch in this process over loopback gets every DATA packet ACKed, epoch
// after epoch, and the switch sees each exactly once (no resends, no
// duplicates, nothing dropped).
#include "bench/traffic_replay.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>

#include "hotpath/controller/switch_control_client.h"
#include "switchd/switch_daemon.h"

namespace libra::bench {
namespace {

TEST(TrafficReplayTest, EveryPacketIsAckedOnceEpochByEpoch) {
  dataplane::ProgramBenchmarkOptions rows;
  rows.workers = 4;
  rows.slots_per_packet = 8;
  rows.cells_per_array = 256;
  rows.packets_per_worker = 100;
  const dataplane::BenchTraffic traffic = dataplane::MakeRowTraffic(rows);

  switchd::SwitchdOptions options;
  options.listen = {0x7f000001, 0};
  options.control = {0x7f000001, 0};
  switchd::SwitchDaemon daemon(options);
  std::atomic<bool> stop{false};
  std::thread switch_thread([&] { daemon.Run(stop); });

  std::vector<std::unique_ptr<net::UdpSocket>> sockets;
  std::vector<net::UdpSocket*> worker_sockets;
  SwitchJob job;
  job.job_id = traffic.job_id;
  job.token = "test";
  job.cells_per_array = traffic.cells_per_array;
  job.slots_per_packet = traffic.slots_per_packet;
  job.servers.push_back({0x7f000001, 9});
  for (int w = 0; w < traffic.workers; ++w) {
    sockets.push_back(std::make_unique<net::UdpSocket>(UdpEndpoint{0x7f000001, 0}));
    worker_sockets.push_back(sockets.back().get());
    job.workers.push_back(sockets.back()->local());
  }
  hotpath::SwitchControlClient control(daemon.control_endpoint());
  control.InstallJob(job);

  ReplayOptions replay;
  replay.threads = 2;
  replay.window = 16;
  replay.seconds = 0.05;
  const ReplayTotals totals =
      ReplayTraffic(traffic, worker_sockets, daemon.data_endpoint(), replay);
  const nlohmann::json counters = control.Counters();
  stop = true;
  switch_thread.join();

  EXPECT_FALSE(totals.stalled);
  ASSERT_GE(totals.epochs, 1u);
  const std::uint64_t per_epoch = traffic.epochs[0].size();
  EXPECT_EQ(totals.packets_acked, totals.epochs * per_epoch);
  EXPECT_EQ(counters["events"]["data_packets"].get<std::uint64_t>(), totals.packets_sent);
  EXPECT_EQ(counters["events"]["data_duplicates"].get<std::uint64_t>(),
            totals.packets_sent - totals.packets_acked);
  EXPECT_EQ(counters["drops_total"].get<std::uint64_t>(), 0u);
}

TEST(TrafficReplayTest, RefusesTrafficItCannotReplay) {
  dataplane::BenchTraffic traffic;  // no epochs
  net::UdpSocket socket({0x7f000001, 0});
  std::vector<net::UdpSocket*> sockets(static_cast<std::size_t>(traffic.workers), &socket);
  EXPECT_THROW(ReplayTraffic(traffic, sockets, {0x7f000001, 9}, {}), std::invalid_argument);
  traffic.epochs.emplace_back().push_back({{1, 2, 3}, 0});  // no DATA
  EXPECT_THROW(ReplayTraffic(traffic, sockets, {0x7f000001, 9}, {}), std::invalid_argument);
}

}  // namespace
}  // namespace libra::bench
