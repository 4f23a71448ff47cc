// An engine started on a socket the node reserved (EngineLoopOptions::socket)
// uses that socket: the port it named in its JOIN was never free for another
// process to take, a datagram sent to it before the engine started still
// reaches the engine, and the port stays held after the engine stops (a
// restarted engine gets it back).
#include "hotpath/node/engine_socket.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>

#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "hotpath/node/engine_loop.h"
#include "hotpath/worker/hot_sender.h"
#include "net/udp_socket.h"
#include "small_hot_set.h"
#include "wait_for.h"

namespace libra::hotpath {
namespace {

using namespace std::chrono_literals;

bool CanBind(const UdpEndpoint& endpoint) {
  try {
    net::UdpSocket other(endpoint);
    return true;
  } catch (const std::system_error&) {
    return false;
  }
}

// The hot path's packets are marked low-delay, for networks with priority
// queues; a plain UDP socket is not.
TEST(EngineSocket, MarksItsPacketsLowDelay) {
  auto tos_of = [](const net::UdpSocket& socket) {
    int tos = -1;
    socklen_t length = sizeof(tos);
    EXPECT_EQ(::getsockopt(socket.fd(), IPPROTO_IP, IP_TOS, &tos, &length), 0);
    return tos;
  };
  EXPECT_EQ(tos_of(net::UdpSocket(UdpEndpoint{0x7f000001, 0}, EngineSocketOptions())),
            net::kHotPathTos);
  EXPECT_EQ(tos_of(net::UdpSocket(UdpEndpoint{0x7f000001, 0})), 0);
}

TEST(EngineSocket, ASenderOnAReservedSocketKeepsItsPortAndItsQueuedDatagrams) {
  net::UdpSocket fake_switch{UdpEndpoint{0x7f000001, 0}};
  auto reserved =
      std::make_shared<net::UdpSocket>(UdpEndpoint{0x7f000001, 0}, EngineSocketOptions());
  const UdpEndpoint address = reserved->local();
  ASSERT_FALSE(CanBind(address)) << "a reserved port is held";

  // Sent before any engine runs: queued in the reserved socket.
  const std::vector<std::uint8_t> garbage = {1, 2, 3};
  ASSERT_TRUE(fake_switch.SendTo(garbage, address));

  HotSenderOptions options;
  options.job_id = 3;
  options.switch_address = fake_switch.local();
  options.local = address;
  options.socket = reserved;
  {
    HotSender sender(testing::SmallHotSet(), options);
    EXPECT_EQ(sender.local(), address);
    testing::WaitFor([&] { return sender.counters().malformed_packets == 1; });
  }
  EXPECT_FALSE(CanBind(address)) << "the port outlives the engine";

  HotSender restarted(testing::SmallHotSet(), options);
  EXPECT_EQ(restarted.local(), address);
  ASSERT_TRUE(fake_switch.SendTo(garbage, address));
  testing::WaitFor([&] { return restarted.counters().malformed_packets == 1; });
}

// The switch sends runs of equal-sized datagrams as one segmented send, and
// an engine's socket takes such a run as one coalesced message: the engine
// still handles each datagram of it apart (here each is malformed, and each
// is counted).
TEST(EngineSocket, ASegmentedRunFromTheSwitchIsHandledDatagramByDatagram) {
  net::UdpSocket fake_switch{UdpEndpoint{0x7f000001, 0}};
  HotSenderOptions options;
  options.job_id = 3;
  options.switch_address = fake_switch.local();
  HotSender sender(testing::SmallHotSet(), options);

  constexpr std::size_t kRun = 40;
  net::SendQueue run(fake_switch.fd(), kRun, /*segmentation=*/true);
  const std::vector<std::uint8_t> garbage(24, 0xee);
  for (std::size_t i = 0; i < kRun; ++i) run.Push(garbage, sender.local());
  run.Flush();
  ASSERT_EQ(run.packets_sent(), kRun);
  testing::WaitFor([&] { return sender.counters().malformed_packets == kRun; });
  EXPECT_EQ(sender.counters().packets_received, kRun);
}

// The I/O thread carries the name it was started with, so that top -H and
// perf tell a node's threads apart.
TEST(EngineLoop, ItsThreadHasTheNameItWasStartedWith) {
  class NameReader final : public EngineHandler {
   public:
    void OnMessage(const wire::Message&, std::span<const std::uint8_t>,
                   const UdpEndpoint&) override {}
    Clock::time_point Progress(Clock::time_point now, net::SendQueue&) override {
      if (!told_) {
        char name[16] = {};
        pthread_getname_np(pthread_self(), name, sizeof(name));
        name_.set_value(name);
        told_ = true;
      }
      return now + std::chrono::hours(1);
    }
    std::future<std::string> Name() { return name_.get_future(); }

   private:
    std::promise<std::string> name_;
    bool told_ = false;
  };
  NameReader reader;
  std::future<std::string> name = reader.Name();
  EngineLoop loop(EngineLoopOptions{});
  loop.Start(reader, "hot-test-loop");
  EXPECT_EQ(name.get(), "hot-test-loop");  // the loop's first turn runs Progress
  loop.Stop();
}

TEST(EngineSocket, WithoutAReservedSocketTheEngineBindsItsOwn) {
  HotSenderOptions options;
  options.switch_address = UdpEndpoint{0x7f000001, 9};
  HotSender sender(testing::SmallHotSet(), options);
  EXPECT_NE(sender.local().port, 0);
  EXPECT_FALSE(CanBind(sender.local()));
}

}  // namespace
}  // namespace libra::hotpath
