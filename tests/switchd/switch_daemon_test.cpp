// SwitchDaemon in this process, behind its UDP and control ports on
// loopback: how it hands its replies to the kernel.
#include "switchd/switch_daemon.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "hotpath/controller/switch_control_client.h"
#include "net/udp_socket.h"
#include "wire/wire.h"

namespace libra::switchd {
namespace {

constexpr std::uint32_t kJob = 7;
constexpr std::uint32_t kUpdates = 8;

// An UPDATE of server 0, epoch 0, packet `seq`: one row block of four cells
// (row `seq`), so that every UPDATE has the same length.
std::vector<std::uint8_t> Update(std::uint32_t seq) {
  wire::Header header;
  header.type = wire::MessageType::kUpdate;
  header.job_id = kJob;
  header.node_id = 0;
  header.epoch = 0;
  header.seq = seq;
  header.flags = seq + 1 == kUpdates ? wire::kFlagLast : 0;
  std::vector<wire::CellValue> cells;
  for (std::uint32_t array = 0; array < 4; ++array) cells.push_back({array, seq, 0x3f800000u});
  std::vector<std::uint8_t> bytes(wire::UpdateSize(cells));
  EXPECT_EQ(wire::EncodeUpdate(header, cells, bytes), bytes.size());
  return bytes;
}

// A batch's replies leave grouped by destination, in order within each: the
// copies of a run of UPDATEs reach each worker as one segmented send, and
// their ACKs the server as another, instead of one datagram at a time
// (copies to every worker and the ACK interleave in the program's output,
// and only consecutive datagrams to one destination make a run). On
// loopback that halved switchd's CPU in a forced DeepFM job.
TEST(SwitchDaemon, TheCopiesOfARunOfUpdatesLeaveAsOneRunPerWorker) {
  SwitchdOptions options;
  options.listen = {0x7f000001, 0};
  options.control = {0x7f000001, 0};
  SwitchDaemon daemon(options);
  std::atomic<bool> stop{false};
  std::thread switch_thread([&] { daemon.Run(stop); });

  net::UdpSocket server({0x7f000001, 0});
  std::vector<std::unique_ptr<net::UdpSocket>> workers;
  SwitchJob job;
  job.job_id = kJob;
  job.token = "test";
  job.cells_per_array = 64;
  job.slots_per_packet = 8;
  job.servers.push_back(server.local());
  bool coalescing = server.EnableReceiveCoalescing();
  server.SetReceiveTimeout(5000);
  for (int w = 0; w < 2; ++w) {
    workers.push_back(std::make_unique<net::UdpSocket>(UdpEndpoint{0x7f000001, 0}));
    coalescing = workers.back()->EnableReceiveCoalescing() && coalescing;
    workers.back()->SetReceiveTimeout(5000);
    job.workers.push_back(workers.back()->local());
  }
  if (!coalescing) {
    stop = true;
    switch_thread.join();
    GTEST_SKIP() << "this kernel does not pass segmented sends as one message (UDP_GRO)";
  }
  hotpath::SwitchControlClient control(daemon.control_endpoint());
  control.InstallJob(job);

  // One segmented send: the switch takes the run in one batch.
  net::SendQueue run(server.fd(), kUpdates, /*segmentation=*/true);
  std::vector<std::vector<std::uint8_t>> updates;
  for (std::uint32_t seq = 0; seq < kUpdates; ++seq) updates.push_back(Update(seq));
  for (const auto& update : updates) run.Push(update, daemon.data_endpoint());
  run.Flush();
  ASSERT_EQ(run.packets_sent(), kUpdates);

  for (const auto& worker : workers) {
    net::ReceiveBatch receive(16, /*coalesced=*/true);
    ASSERT_EQ(receive.ReceiveWaiting(worker->fd()), kUpdates);
    EXPECT_EQ(receive.messages(), 1u) << "the copies came one by one";
    for (std::uint32_t seq = 0; seq < kUpdates; ++seq) {
      wire::Header header;
      ASSERT_EQ(wire::DecodeHeader(receive.payload(seq), &header), wire::DecodeError::kNone);
      EXPECT_EQ(header.type, wire::MessageType::kReplica);
      EXPECT_EQ(header.seq, seq) << "in the order the UPDATEs came";
    }
  }
  net::ReceiveBatch acks(16, /*coalesced=*/true);
  ASSERT_EQ(acks.ReceiveWaiting(server.fd()), kUpdates);
  EXPECT_EQ(acks.messages(), 1u);
  for (std::uint32_t seq = 0; seq < kUpdates; ++seq) {
    wire::Header header;
    ASSERT_EQ(wire::DecodeHeader(acks.payload(seq), &header), wire::DecodeError::kNone);
    EXPECT_EQ(header.type, wire::MessageType::kAck);
    EXPECT_EQ(header.seq, seq);
  }
  stop = true;
  switch_thread.join();
}

}  // namespace
}  // namespace libra::switchd
