#include "cluster/netns_cluster.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "net/udp_socket.h"

namespace libra::cluster {
namespace {

constexpr size_t kMaxHosts = 16;
constexpr const char* kSubnet = "10.77.0.";  // .1 is the bridge, hosts from .2

std::string Join(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& a : argv) line += (line.empty() ? "" : " ") + a;
  return line;
}

bool ValidHostName(const std::string& name) {
  if (name.empty() || name.size() > 24) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') return false;
  }
  return true;
}

std::string Format(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

}  // namespace

std::string RunOrThrow(const std::vector<std::string>& argv) {
  int out[2], err[2];
  if (pipe(out) != 0 || pipe(err) != 0) {
    throw std::runtime_error("pipe: " + std::string(std::strerror(errno)));
  }
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork: " + std::string(std::strerror(errno)));
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    dup2(err[1], STDERR_FILENO);
    close(out[0]);
    close(out[1]);
    close(err[0]);
    close(err[1]);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    std::fprintf(stderr, "cannot run %s: %s\n", args[0], std::strerror(errno));
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  std::string stdout_text, stderr_text;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open_fds = 2;
  while (open_fds > 0) {
    if (poll(fds, 2, -1) < 0 && errno != EINTR) break;
    for (pollfd& fd : fds) {
      if (fd.fd < 0 || !(fd.revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[4096];
      const ssize_t n = read(fd.fd, buf, sizeof(buf));
      if (n > 0) {
        (fd.fd == out[0] ? stdout_text : stderr_text).append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fd.fd);
        fd.fd = -1;
        --open_fds;
      }
    }
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    while (!stderr_text.empty() && stderr_text.back() == '\n') stderr_text.pop_back();
    throw std::runtime_error("`" + Join(argv) + "` failed: " + stderr_text);
  }
  return stdout_text;
}

namespace {

// `tc ARGS` in network namespace `ns` (RunOrThrow).
std::string RunTc(const std::string& ns, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"ip", "netns", "exec", ns, "tc"};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunOrThrow(argv);
}

}  // namespace

NetnsCluster::NetnsCluster(const std::vector<std::string>& hosts, const LinkShape& shape,
                           const std::vector<size_t>& unshaped, const std::string& prefix)
    : hosts_(hosts), prefix_(prefix + "-" + std::to_string(getpid()) + "-") {
  // Letters and digits only: "<prefix>-<pid>-" must not start another
  // prefix's names (RemoveStale reads the pid after the first '-').
  if (prefix.empty() || prefix.size() > 12 ||
      !std::all_of(prefix.begin(), prefix.end(),
                   [](char c) { return std::isalnum(static_cast<unsigned char>(c)); })) {
    throw std::invalid_argument("netns cluster: bad name prefix '" + prefix + "'");
  }
  if (hosts.empty() || hosts.size() > kMaxHosts) {
    throw std::invalid_argument("netns cluster: 1 to " + std::to_string(kMaxHosts) +
                                " hosts, not " + std::to_string(hosts.size()));
  }
  for (const std::string& h : hosts) {
    if (!ValidHostName(h)) throw std::invalid_argument("netns cluster: bad host name '" + h + "'");
  }
  if (!(shape.rate_mbit >= 0) || !(shape.queue_ms > 0) || !(shape.loss_percent >= 0) ||
      shape.loss_percent >= 100) {
    throw std::invalid_argument("netns cluster: bad link shape");
  }
  switch_ns_ = prefix_ + "switch";
  try {
    Create(shape, unshaped);
  } catch (...) {
    Destroy();
    throw;
  }
}

NetnsCluster::~NetnsCluster() { Destroy(); }

std::string NetnsCluster::host_namespace(size_t i) const { return prefix_ + hosts_.at(i); }

std::string NetnsCluster::host_address(size_t i) const { return kSubnet + std::to_string(i + 2); }

std::string NetnsCluster::switch_address() const { return std::string(kSubnet) + "1"; }

std::vector<std::string> NetnsCluster::ExecIn(const std::string& ns) {
  return {"ip", "netns", "exec", ns};
}

void NetnsCluster::Create(const LinkShape& shape, const std::vector<size_t>& unshaped) {
  RunOrThrow({"ip", "netns", "add", switch_ns_});
  created_.push_back(switch_ns_);
  RunOrThrow({"ip", "-n", switch_ns_, "link", "add", "br0", "type", "bridge"});
  RunOrThrow({"ip", "-n", switch_ns_, "addr", "add", switch_address() + "/24", "dev", "br0"});
  RunOrThrow({"ip", "-n", switch_ns_, "link", "set", "br0", "up"});
  RunOrThrow({"ip", "-n", switch_ns_, "link", "set", "lo", "up"});
  for (size_t i = 0; i < hosts_.size(); ++i) {
    const std::string ns = host_namespace(i);
    const std::string port = switch_port(i);
    RunOrThrow({"ip", "netns", "add", ns});
    created_.push_back(ns);
    RunOrThrow({"ip", "link", "add", "name", "eth0", "netns", ns, "type", "veth", "peer", "name",
                port, "netns", switch_ns_});
    RunOrThrow({"ip", "-n", switch_ns_, "link", "set", port, "master", "br0"});
    RunOrThrow({"ip", "-n", switch_ns_, "link", "set", port, "up"});
    RunOrThrow({"ip", "-n", ns, "addr", "add", host_address(i) + "/24", "dev", "eth0"});
    RunOrThrow({"ip", "-n", ns, "link", "set", "eth0", "up"});
    RunOrThrow({"ip", "-n", ns, "link", "set", "lo", "up"});
    if (shape.xdp_switch) {
#if defined(LIBRA_XDP_PASS_OBJECT)
      RunOrThrow({"ip", "-n", ns, "link", "set", "dev", "eth0", "xdpdrv", "obj",
                  LIBRA_XDP_PASS_OBJECT, "sec", "xdp"});
#else
      throw std::runtime_error(
          "netns cluster: this build has no XDP programs (needs clang, "
          "bpftool and libbpf-dev)");
#endif
    }
    if (std::find(unshaped.begin(), unshaped.end(), i) != unshaped.end()) continue;
    Shape(ns, "eth0", shape, shape.host_band);
    if (shape.xdp_switch) {
      ShapeArrivals(i, "eth0", shape);
    } else {
      Shape(switch_ns_, port, shape, shape.port_band);
    }
    if (shape.loss_percent > 0) {
      // Loss on what the host sends (tc netem is not in every kernel;
      // nftables' random number generator is).
      const long per_million = std::lround(shape.loss_percent * 1e4);
      RunOrThrow({"ip", "netns", "exec", ns, "nft", "add", "table", "inet", "libra_loss"});
      RunOrThrow({"ip", "netns", "exec", ns, "nft", "add", "chain", "inet", "libra_loss", "out",
                  "{ type filter hook output priority 0 ; }"});
      RunOrThrow({"ip", "netns", "exec", ns, "nft", "add", "rule", "inet", "libra_loss", "out",
                  "oifname", "eth0", "numgen", "random", "mod", "1000000", "<",
                  std::to_string(per_million), "drop"});
    }
  }
}

void NetnsCluster::Shape(const std::string& ns, const std::string& device, const LinkShape& shape,
                         bool band) {
  if (shape.rate_mbit <= 0) return;
  const double bytes_per_second = shape.rate_mbit * 1e6 / 8;
  // The bucket must hold a few full packets (veth sends GSO bursts) and the
  // queue some time at the link rate, so bursts wait instead of dropping.
  const auto burst = static_cast<uint64_t>(std::max(64.0 * 1024, bytes_per_second * 0.002));
  const auto limit =
      static_cast<uint64_t>(std::max(32.0 * 1024, bytes_per_second * shape.queue_ms / 1000));
  RunTc(ns, {"qdisc", "add", "dev", device, "root", "handle", "1:", "tbf", "rate",
             Format(shape.rate_mbit) + "mbit", "burst", std::to_string(burst), "limit",
             std::to_string(limit)});
  if (band) {
    // Two bands under the tbf, each a byte FIFO as long as the tbf's own:
    // the hot path's (IP TOS low-delay, net::kHotPathTos) served first,
    // everything else in the other, so that a run without hot packets meets
    // the same queue as without the band. HTB gives the priority (this
    // kernel has no sch_prio); its rates and buckets are far above the
    // link's (a veth GSO burst is up to 64 kB), so that the tbf alone
    // shapes and HTB only orders.
    const auto htb_class = [&](const char* parent, const char* id, const char* rate,
                               std::vector<std::string> more) {
      std::vector<std::string> args = {"class",  "add",     "dev",     device,  "parent",
                                       parent,   "classid", id,        "htb",   "rate",
                                       rate,     "ceil",    "10gbit",  "burst", "4mb",
                                       "cburst", "4mb",     "quantum", "65536"};
      args.insert(args.end(), more.begin(), more.end());
      RunTc(ns, args);
    };
    RunTc(ns,
          {"qdisc", "add", "dev", device, "parent", "1:1", "handle", "10:", "htb", "default", "2"});
    htb_class("10:", "10:100", "10gbit", {});
    // The hot band is owed the whole rate; the other borrows what it leaves.
    htb_class("10:100", "10:1", "10gbit", {"prio", "0"});
    htb_class("10:100", "10:2", "8kbit", {"prio", "1"});
    RunTc(ns, {"qdisc", "add", "dev", device, "parent", "10:1", "handle", "11:", "bfifo", "limit",
               std::to_string(limit)});
    RunTc(ns, {"qdisc", "add", "dev", device, "parent", "10:2", "handle", "12:", "bfifo", "limit",
               std::to_string(limit)});
    RunTc(ns,
          {"filter", "add", "dev", device, "parent", "10:", "protocol", "ip", "prio", "1", "u32",
           "match", "ip", "tos", std::to_string(net::kHotPathTos), "0xfc", "flowid", "10:1"});
  }
}

void NetnsCluster::ShapeArrivals(size_t host, const std::string& device, const LinkShape& shape) {
  if (shape.rate_mbit <= 0) return;
  const std::string ns = host_namespace(host);
  download_at_host_.resize(hosts_.size());
  download_at_host_[host] = true;
  RunOrThrow({"ip", "-n", ns, "link", "add", "ifb0", "type", "ifb"});
  RunOrThrow({"ip", "-n", ns, "link", "set", "ifb0", "up"});
  RunTc(ns, {"qdisc", "add", "dev", device, "handle", "ffff:", "ingress"});
  // u32 matching every packet: not every kernel has cls_matchall.
  RunTc(ns, {"filter", "add", "dev", device, "parent", "ffff:", "protocol", "all", "u32", "match",
             "u32", "0", "0", "action", "mirred", "egress", "redirect", "dev", "ifb0"});
  // The ifb stands for the switch's port.
  Shape(ns, "ifb0", shape, shape.port_band);
}

void NetnsCluster::Destroy() {
  // Removing a namespace removes its veth ends, and with them their peers.
  for (auto it = created_.rbegin(); it != created_.rend(); ++it) {
    try {
      RunOrThrow({"ip", "netns", "del", *it});
    } catch (const std::exception&) {
      // Already gone; nothing else to do.
    }
  }
  created_.clear();
}

LinkCounters NetnsCluster::Counters(size_t host) const {
  const std::string port = switch_port(host);
  const auto info = nlohmann::json::parse(
      RunOrThrow({"ip", "-n", switch_ns_, "-j", "-s", "link", "show", "dev", port}));
  const auto& stats = info.at(0).at("stats64");
  LinkCounters c;
  // The switch's end receives what the host sends, and sends what it gets.
  c.bytes_from_host = stats.at("rx").at("bytes").get<uint64_t>();
  c.packets_from_host = stats.at("rx").at("packets").get<uint64_t>();
  c.bytes_to_host = stats.at("tx").at("bytes").get<uint64_t>();
  c.packets_to_host = stats.at("tx").at("packets").get<uint64_t>();
  c.drops_from_host = ShaperDrops(host_namespace(host), "eth0");
  c.drops_to_host = host < download_at_host_.size() && download_at_host_[host]
                        ? ShaperDrops(host_namespace(host), "ifb0")
                        : ShaperDrops(switch_ns_, port);
  return c;
}

uint64_t NetnsCluster::ShaperDrops(const std::string& ns, const std::string& device) {
  const auto qdiscs =
      nlohmann::json::parse(RunTc(ns, {"-s", "-j", "qdisc", "show", "dev", device}));
  // The root (the tbf) counts every drop of the queues under it; each of
  // those counts its own again.
  for (const auto& q : qdiscs) {
    if (q.value("root", false)) return q.value("drops", uint64_t{0});
  }
  return 0;
}

bool NetnsCluster::HaveRoot() { return geteuid() == 0; }

std::string NetnsCluster::WhyUnavailable(bool need_loss) {
  if (!HaveRoot()) return "needs root, to create network namespaces and shape links with tc";
  try {
    RunOrThrow({"tc", "-V"});
    RunOrThrow({"ip", "-V"});
    if (need_loss) RunOrThrow({"nft", "--version"});
  } catch (const std::exception& e) {
    return std::string(e.what()) + " (install iproute2 and nftables)";
  }
  const std::string probe = "libra-" + std::to_string(getpid()) + "-probe";
  try {
    RunOrThrow({"ip", "netns", "add", probe});
  } catch (const std::exception& e) {
    return std::string("cannot create a network namespace: ") + e.what();
  }
  try {
    RunOrThrow({"ip", "netns", "del", probe});
  } catch (const std::exception&) {
    // RemoveStale() takes it once this process is gone.
  }
  return "";
}

void NetnsCluster::RunIn(const std::string& ns, const std::function<void()>& fn) {
  std::exception_ptr failed;
  std::thread thread([&] {
    try {
      const int fd = open(("/run/netns/" + ns).c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0)
        throw std::runtime_error("cannot open namespace " + ns + ": " + std::strerror(errno));
      const int entered = setns(fd, CLONE_NEWNET);
      const int error = errno;
      close(fd);
      if (entered != 0) {
        throw std::runtime_error("cannot enter namespace " + ns + ": " + std::strerror(error));
      }
      fn();
    } catch (...) {
      failed = std::current_exception();
    }
  });
  thread.join();
  if (failed) std::rethrow_exception(failed);
}

void NetnsCluster::RemoveStale(const std::string& prefix) {
  std::string list;
  try {
    list = RunOrThrow({"ip", "netns", "list"});
  } catch (const std::exception&) {
    return;
  }
  std::istringstream lines(list);
  std::string line;
  while (std::getline(lines, line)) {
    const std::string name = line.substr(0, line.find(' '));
    const size_t start = prefix.size() + 1;
    if (!name.starts_with(prefix + "-")) continue;
    const size_t dash = name.find('-', start);
    if (dash == std::string::npos) continue;
    const pid_t pid =
        static_cast<pid_t>(std::strtol(name.substr(start, dash - start).c_str(), nullptr, 10));
    if (pid <= 0 || (kill(pid, 0) != 0 && errno == ESRCH)) {
      try {
        RunOrThrow({"ip", "netns", "del", name});
      } catch (const std::exception&) {
      }
    }
  }
}

}  // namespace libra::cluster
