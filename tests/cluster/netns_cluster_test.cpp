// The emulated cluster and `libra bench cluster` on it. Both need root
// (network namespaces, tc); without it the tests skip with a message.
#include "cluster/netns_cluster.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "common/run_command.h"
#include "net/udp_socket.h"

namespace libra::cluster {
namespace {

using test_support::RunCommand;

// Whether this machine lets us make namespaces; the reason if not.
std::string WhyNoNamespaces() {
  if (!NetnsCluster::HaveRoot()) return "needs root (network namespaces)";
  const std::string probe = "libra-probe-" + std::to_string(getpid());
  if (RunCommand("ip netns add " + probe).status != 0) return "cannot create network namespaces";
  RunCommand("ip netns del " + probe);
  if (RunCommand("tc -V").status != 0) return "no tc (iproute2)";
  return "";
}

bool NamespaceExists(const std::string& name) {
  const std::string list = RunCommand("ip netns list").output;
  return list.find(name + " ") != std::string::npos || list.find(name + "\n") != std::string::npos;
}

TEST(NetnsClusterTest, BuildsShapedLinksThroughTheSwitchAndRemovesThem) {
  if (const std::string why = WhyNoNamespaces(); !why.empty()) GTEST_SKIP() << why;
  std::string host_ns, switch_ns;
  {
    LinkShape shape;
    shape.rate_mbit = 25;
    NetnsCluster cluster({"a", "b"}, shape);
    host_ns = cluster.host_namespace(0);
    switch_ns = cluster.switch_namespace();
    EXPECT_TRUE(NamespaceExists(host_ns));
    EXPECT_TRUE(NamespaceExists(cluster.host_namespace(1)));
    EXPECT_TRUE(NamespaceExists(switch_ns));
    EXPECT_EQ(cluster.host_address(0), "10.77.0.2");
    EXPECT_EQ(cluster.switch_address(), "10.77.0.1");
    // Both directions of the host's link are shaped.
    const std::string up =
        RunCommand("ip netns exec " + host_ns + " tc qdisc show dev eth0").output;
    const std::string down =
        RunCommand("ip netns exec " + switch_ns + " tc qdisc show dev p0").output;
    EXPECT_NE(up.find("tbf"), std::string::npos) << up;
    EXPECT_NE(up.find("25Mbit"), std::string::npos) << up;
    EXPECT_NE(down.find("tbf"), std::string::npos) << down;
    // Host a reaches host b through the bridge, and the switch counts it.
    const LinkCounters before = cluster.Counters(0);
    // An unconnected UDP socket: the ICMP "port unreachable" from b is ignored.
    const auto ping = RunCommand("ip netns exec " + host_ns +
                                 " python3 -c \"import socket; s = socket.socket(2, 2); "
                                 "[s.sendto(b'x' * 1000, ('10.77.0.3', 9)) for _ in range(20)]\"");
    EXPECT_EQ(ping.status, 0) << ping.output;
    const LinkCounters after = cluster.Counters(0);
    EXPECT_GE(after.bytes_from_host - before.bytes_from_host, 20u * 1000u);
    EXPECT_GE(after.packets_from_host - before.packets_from_host, 20u);
  }
  EXPECT_FALSE(NamespaceExists(host_ns));
  EXPECT_FALSE(NamespaceExists(switch_ns));
}

// Host a sends host b 300 unmarked datagrams (420 kB, which a 4 Mbit/s
// link drains in 0.84 s; its queue holds 1 s, so all of them wait) and then
// 20 marked as the hot path's; returns how many arrived and the position of
// the first marked one among them (tests/cluster/band_order.py). With
// `sender_unshaped` a's link runs at veth speed, so that the datagrams wait
// in the switch's port to b rather than in a's own queue.
struct ArrivalOrder {
  int received = 0;
  int first_marked = -1;
};
ArrivalOrder MarkedAfterUnmarked(LinkShape shape, bool sender_unshaped) {
  shape.rate_mbit = 4;
  shape.queue_ms = 1000;
  NetnsCluster cluster({"a", "b"}, shape,
                       sender_unshaped ? std::vector<size_t>{0} : std::vector<size_t>{});
  const auto result = RunCommand("ip netns exec " + cluster.host_namespace(1) + " python3 " +
                                 LIBRA_BAND_ORDER_SCRIPT + " " + cluster.host_namespace(0) + " " +
                                 cluster.host_address(1) + " " + std::to_string(net::kHotPathTos));
  EXPECT_EQ(result.status, 0) << result.output;
  ArrivalOrder order;
  std::istringstream(result.output) >> order.received >> order.first_marked;
  return order;
}

// Where a band is, the shaped queue holds two byte FIFOs under the tbf,
// each as long as the tbf's own queue without it: by default on each
// host's end (its sending queue) and on the switch's port to it; host_band
// and port_band take each away.
TEST(NetnsClusterTest, TheHotPathBandPutsTwoByteQueuesUnderTheShapersItIsOn) {
  if (const std::string why = WhyNoNamespaces(); !why.empty()) GTEST_SKIP() << why;
  const auto queues = [](const LinkShape& shape) {
    NetnsCluster cluster({"a"}, shape);
    return std::pair{
        RunCommand("ip netns exec " + cluster.host_namespace(0) + " tc qdisc show dev eth0").output,
        RunCommand("ip netns exec " + cluster.switch_namespace() + " tc qdisc show dev p0").output};
  };
  const auto has_band = [](const std::string& queue) {
    EXPECT_NE(queue.find("tbf 1: root"), std::string::npos) << queue;
    const bool htb = queue.find("htb 10: parent 1:1") != std::string::npos;
    // 20 Mbit/s for 200 ms is 500,000 bytes.
    EXPECT_EQ(queue.find("bfifo 11: parent 10:1 limit 500000b") != std::string::npos, htb) << queue;
    EXPECT_EQ(queue.find("bfifo 12: parent 10:2 limit 500000b") != std::string::npos, htb) << queue;
    return htb;
  };
  LinkShape shape;
  shape.rate_mbit = 20;
  const auto [host, port] = queues(shape);
  EXPECT_TRUE(has_band(host));
  EXPECT_TRUE(has_band(port));
  shape.port_band = false;
  const auto [host_only, fifo_port] = queues(shape);
  EXPECT_TRUE(has_band(host_only));
  EXPECT_FALSE(has_band(fifo_port));
  shape.port_band = true;
  shape.host_band = false;
  const auto [fifo_host, port_only] = queues(shape);
  EXPECT_FALSE(has_band(fifo_host));
  EXPECT_TRUE(has_band(port_only));
}

// One FIFO serves the marked datagrams after every unmarked one queued
// before them; a band lets them pass those still queued (all but the
// tbf's 64 kB burst and what drained while a sent: about 250 of them
// unless a was held up for most of the 0.84 s). `fifo` is the default
// links with the band taken from the queue where the datagrams wait.
void ExpectMarkedPacketsFirstOnlyWithTheBand(const LinkShape& fifo, bool sender_unshaped) {
  const ArrivalOrder in_order = MarkedAfterUnmarked(fifo, sender_unshaped);
  EXPECT_EQ(in_order.received, 320);
  EXPECT_EQ(in_order.first_marked, 300);
  const ArrivalOrder banded = MarkedAfterUnmarked(LinkShape{}, sender_unshaped);
  EXPECT_EQ(banded.received, 320);
  EXPECT_GE(banded.first_marked, 0);
  EXPECT_LT(banded.first_marked, 300);
}

// A shaped sender's datagrams wait in its own queue, which has the band
// unless host_band is off.
TEST(NetnsClusterTest, AHostsQueueServesMarkedPacketsFirst) {
  if (const std::string why = WhyNoNamespaces(); !why.empty()) GTEST_SKIP() << why;
  LinkShape fifo;
  fifo.host_band = false;
  ExpectMarkedPacketsFirstOnlyWithTheBand(fifo, false);
}

// An unshaped sender's datagrams wait in the switch's port to b, which has
// the band unless port_band is off.
TEST(NetnsClusterTest, TheSwitchsPortServesMarkedPacketsFirst) {
  if (const std::string why = WhyNoNamespaces(); !why.empty()) GTEST_SKIP() << why;
  LinkShape fifo;
  fifo.port_band = false;
  ExpectMarkedPacketsFirstOnlyWithTheBand(fifo, true);
}

TEST(NetnsClusterTest, RejectsBadHostNames) {
  EXPECT_THROW(NetnsCluster({"a b"}, LinkShape{}), std::invalid_argument);
  EXPECT_THROW(NetnsCluster({}, LinkShape{}), std::invalid_argument);
  // A prefix with a '-' would pass for another prefix's names ("libra-x-").
  EXPECT_THROW(NetnsCluster({"a"}, LinkShape{}, {}, "libra-x"), std::invalid_argument);
  EXPECT_THROW(NetnsCluster({"a"}, LinkShape{}, {}, ""), std::invalid_argument);
}

TEST(ClusterBenchTest, WithoutRootItSaysSo) {
  if (NetnsCluster::HaveRoot()) GTEST_SKIP() << "runs as root: the refusal cannot be seen";
  const auto r = RunCommand(std::string(LIBRA_BIN) + " bench cluster --out /tmp/unused");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("needs root"), std::string::npos) << r.output;
}

TEST(ClusterBenchTest, TrainsPlainAndLibraOnTheClusterAndCleansUp) {
  if (const std::string why = WhyNoNamespaces(); !why.empty()) GTEST_SKIP() << why;
  const std::filesystem::path out =
      std::filesystem::temp_directory_path() / ("libra-cluster-test-" + std::to_string(getpid()));
  const auto namespaces = [] { return RunCommand("ip netns list | grep -c '^libra-'").output; };
  const std::string namespaces_before = namespaces();
  const auto r = RunCommand(
      std::string(LIBRA_BIN) +
      " bench cluster --workloads paper-30k --models lr --workers 2 "
      "--servers 1 --rows 20000 --epochs 1 --batch 500 --rate-mbit 200 --capacity forced "
      "--run-timeout 120 --repeat 2 --out " +
      out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("speedup over the rounds"), std::string::npos) << r.output;
  std::ifstream in(out / "cluster-report.json");
  const auto report = nlohmann::json::parse(in);
  ASSERT_EQ(report["configurations"].size(), 1u);
  const auto& c = report["configurations"][0];
  EXPECT_GT(c["speedup"].get<double>(), 0.0);
  EXPECT_GE(c["bound"]["speedup"].get<double>(), 1.0);
  // The measured overlap lies in [1, N] and can only lower the bound.
  const double overlap = c["bound_with_overlap"]["overlap"].get<double>();
  EXPECT_GE(overlap, 1.0);
  EXPECT_LE(overlap, 2.0);
  EXPECT_LE(c["bound_with_overlap"]["speedup"].get<double>(),
            c["bound"]["speedup"].get<double>() + 1e-9);
  EXPECT_TRUE(c["same_quality"].get<bool>()) << c.dump();
  for (const char* run : {"plain", "libra"}) {
    EXPECT_EQ(c[run]["status"], 0);
    EXPECT_GT(c[run]["samples_per_second"].get<double>(), 0.0);
    uint64_t server_bytes_in = 0;
    for (const auto& link : c[run]["links"]) {
      if (link["host"] == "server0") server_bytes_in = link["bytes_in"].get<uint64_t>();
    }
    EXPECT_GT(server_bytes_in, 0u) << run;
  }
  // Worker 0's iterations after the first, and the second round (--repeat
  // 2): plain and Libra again with the same hot set, the same models.
  EXPECT_GT(c["steady_speedup"].get<double>(), 0.0);
  ASSERT_EQ(c["rounds"].size(), 2u);
  EXPECT_EQ(c["over_rounds"]["rounds"].get<int>(), 2);
  EXPECT_GT(c["rounds"][1]["speedup"].get<double>(), 0.0);
  for (const char* run : {"plain", "libra"}) {
    std::ifstream again(out / (std::string("paper-30k-lr-w2-s1-200mbit-r2-") + run + ".json"));
    const auto second = nlohmann::json::parse(again, nullptr, false);
    ASSERT_FALSE(second.is_discarded()) << run;
    EXPECT_EQ(second["model_fingerprint"], c[run]["model_fingerprint"]) << run;
  }
  // The switch ran only in the Libra run, and every process reported its CPU.
  bool switchd_seen = false;
  for (const auto& p : c["libra"]["cpu"]) switchd_seen |= p["process"] == "switchd";
  EXPECT_TRUE(switchd_seen);
  // Another test of this suite may be running beside this one (ctest -j)
  // with namespaces of its own: wait until the count is back, which a
  // leaked namespace would prevent.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  while (std::stoi(namespaces()) > std::stoi(namespaces_before) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_LE(std::stoi(namespaces()), std::stoi(namespaces_before));
  std::filesystem::remove_all(out);
}

// Runs a small bench configuration with `loss_percent` loss on every host's
// sent packets; returns the configuration's report.
nlohmann::json SmallBench(double loss_percent) {
  const std::filesystem::path out =
      std::filesystem::temp_directory_path() /
      ("libra-cluster-loss-" + std::to_string(getpid()) + "-" + std::to_string(loss_percent));
  const auto r = RunCommand(
      std::string(LIBRA_BIN) +
      " bench cluster --workloads paper-30k --models lr --workers 2 "
      "--servers 1 --rows 20000 --epochs 1 --batch 500 --rate-mbit 200 --capacity forced "
      "--run-timeout 120 --loss " +
      std::to_string(loss_percent) + " --out " + out.string());
  EXPECT_EQ(r.status, 0) << r.output;
  std::ifstream in(out / "cluster-report.json");
  nlohmann::json report = nlohmann::json::parse(in, nullptr, false);
  std::filesystem::remove_all(out);
  if (report.is_discarded() || report["configurations"].empty()) return nullptr;
  return report["configurations"][0];
}

TEST(ClusterBenchTest, LossOnEveryLinkLeavesBothModelsBitIdentical) {
  if (const std::string why = WhyNoNamespaces(); !why.empty()) GTEST_SKIP() << why;
  if (RunCommand("nft --version").status != 0) GTEST_SKIP() << "no nft (nftables) for loss";
  const nlohmann::json clean = SmallBench(0);
  const nlohmann::json lossy = SmallBench(5);
  ASSERT_FALSE(clean.is_null());
  ASSERT_FALSE(lossy.is_null());
  // TCP repairs the plain run; the hot path's retransmission, dedup and
  // replica repair keep the switch's integer sums exact.
  EXPECT_EQ(lossy["plain"]["model_fingerprint"], clean["plain"]["model_fingerprint"]);
  EXPECT_EQ(lossy["libra"]["model_fingerprint"], clean["libra"]["model_fingerprint"]);
}

}  // namespace
}  // namespace libra::cluster
