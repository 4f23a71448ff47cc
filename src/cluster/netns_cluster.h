// A small emulated cluster on this machine: one network namespace per host
// and one for the switch, each host joined to a Linux bridge in the switch
// namespace by a veth pair whose two ends are rate-limited with `tc tbf`
// (the host's upload on its own end, its download on the switch's end).
// Ordinary traffic (ZeroMQ between the nodes) crosses the bridge; a switchd
// run in the switch namespace listens on the bridge's address, so Libra's
// packets take the same shaped links. Everything is created by the
// constructor and removed by the destructor; names carry this process's pid,
// so RemoveStale() can clean up after a run that was killed.
//
// Needs root (CAP_NET_ADMIN) and the `ip` and `tc` commands (iproute2).
// Addresses are 10.77.0.0/24, which exists only inside these namespaces.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace libra::cluster {

struct LinkShape {
  double rate_mbit = 100;  // each direction of each host link; 0: unshaped
  // tbf queue: this long at the link rate (at least 32 KB). Deep enough
  // for 8 TCP flows converging on one server (with 5 ms, incast drops made
  // the plain PS 15x slower and heartbeats time out), at the price of
  // queueing delay for everything behind them.
  double queue_ms = 200;
  double loss_percent = 0;  // random loss on each host's outgoing packets
  // A band serves the hot path's packets (marked low-delay:
  // net::kHotPathTos) before the rest of a queue: under the tbf, two byte
  // FIFOs of the tbf's length, the hot path's served first. What carries no
  // mark (all of a plain run) meets the same one FIFO as without the band,
  // so both runs of a comparison take the same links.
  //
  // Each host's own sending queue has the band: a host's queue is its
  // kernel's qdisc, and Linux's default, pfifo_fast, serves packets marked
  // low-delay first (fq_codel, systemd's default, would instead keep a
  // small flow from waiting behind a bulk one's queue). false: one FIFO,
  // as a host whose qdisc ignores the mark.
  bool host_band = true;
  // Each of the switch's ports has the band: the switch program chooses
  // the egress queue of each packet it sends (on Tofino the ingress sets
  // the traffic manager's qid), and puts its own in a strict-priority one
  // (docs/switch.md); what it forwards for others takes the default queue.
  // false: one FIFO, a switch that leaves its packets behind the bulk.
  bool port_band = true;
  // The switch answers from an XDP program on its ports (switchd
  // --dataplane xdp). Its XDP_TX frames skip the port's qdisc and reach a
  // veth peer only when that peer has NAPI on, so each host's end gets an
  // XDP program that passes everything (src/xdp/xdp_pass.bpf.c, which
  // turns NAPI on) and its download is shaped on arrival at the host (tc
  // ingress redirected to an ifb device with the tbf) instead of on the
  // switch's port. Throws in a build without the BPF toolchain.
  bool xdp_switch = false;
};

// Bytes and packets through one host's link, as counted at the switch's end.
struct LinkCounters {
  uint64_t bytes_from_host = 0;
  uint64_t bytes_to_host = 0;
  uint64_t packets_from_host = 0;
  uint64_t packets_to_host = 0;
  uint64_t drops_from_host = 0;  // dropped by the shaper of the host's upload
  uint64_t drops_to_host = 0;    // ... and of its download (the switch's end)
};

class NetnsCluster {
 public:
  // Hosts are named by `hosts` (letters, digits, '-'; at most 16). Throws
  // std::runtime_error naming the command that failed, after removing what
  // it had created.
  // Hosts whose index is in `unshaped` get links at veth speed (a control
  // node such as the scheduler, whose traffic is no part of the comparison).
  // `prefix` (letters and digits, at most 12) starts every namespace's
  // name: a job of its own (a benchmark run beside a cluster training)
  // takes another one, so that neither's RemoveStale() touches the other's
  // namespaces.
  NetnsCluster(const std::vector<std::string>& hosts, const LinkShape& shape,
               const std::vector<size_t>& unshaped = {}, const std::string& prefix = "libra");
  ~NetnsCluster();
  NetnsCluster(const NetnsCluster&) = delete;
  NetnsCluster& operator=(const NetnsCluster&) = delete;

  size_t num_hosts() const { return hosts_.size(); }
  const std::string& host_name(size_t i) const { return hosts_[i]; }
  std::string host_namespace(size_t i) const;
  std::string host_address(size_t i) const;
  const std::string& switch_namespace() const { return switch_ns_; }
  std::string switch_address() const;
  // The switch's end of host i's link, in the switch's namespace.
  static std::string switch_port(size_t i) { return "p" + std::to_string(i); }

  // The argv prefix that runs a command in a namespace: ip netns exec NS.
  static std::vector<std::string> ExecIn(const std::string& ns);
  // Runs `fn` on a thread of this process that has entered namespace `ns`
  // (setns), and waits for it; rethrows what `fn` throws. Sockets made there
  // stay in that namespace when used from any other thread, and so do the
  // threads such a thread starts (a ZeroMQ context's I/O threads).
  static void RunIn(const std::string& ns, const std::function<void()>& fn);

  LinkCounters Counters(size_t host) const;

  // True when this process may create namespaces (effective uid 0).
  static bool HaveRoot();
  // "" when a cluster can be built here: root, the `ip` and `tc` commands
  // (and `nft` with `need_loss`), and a namespace that can be made and
  // removed; else one line saying what is missing.
  static std::string WhyUnavailable(bool need_loss = false);
  // Removes the namespaces of earlier runs with this prefix whose process is
  // gone.
  static void RemoveStale(const std::string& prefix = "libra");

 private:
  void Create(const LinkShape& shape, const std::vector<size_t>& unshaped);
  // A tbf at the shape's rate on what `device` sends, with the hot path's
  // band under it when `band`.
  void Shape(const std::string& ns, const std::string& device, const LinkShape& shape, bool band);
  // Shapes what `device` receives: redirected to an ifb device shaped as Shape.
  void ShapeArrivals(size_t host, const std::string& device, const LinkShape& shape);
  void Destroy();
  static uint64_t ShaperDrops(const std::string& ns, const std::string& device);

  std::vector<std::string> hosts_;
  std::string prefix_;  // "<prefix>-<pid>-"
  std::string switch_ns_;
  std::vector<bool> download_at_host_;  // per host: its download's shaper is its ifb0
  std::vector<std::string> created_;    // namespaces to remove
};

// Runs argv (no shell). Returns its stdout; throws std::runtime_error with
// the command line and its stderr if it fails.
std::string RunOrThrow(const std::vector<std::string>& argv);

}  // namespace libra::cluster
