// libra-switchd: the switch program behind a UDP port, with a control port
// (ZeroMQ REP, JSON requests; see control_handler.h). The program is the
// model (dataplane::Program, behind the socket) or the XDP program in the
// kernel (src/xdp; the socket then receives only what XDP passes up, the
// fan-out of READY and REPLICA). One thread runs both:
// it drains the UDP socket in recvmmsg batches, runs each packet through the
// program, sends the replies with sendmmsg, and serves control requests
// between batches, so the program needs no locks.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dataplane/program.h"
#include "wire/pipeline_profile.h"
#include "wire/switch_job.h"

namespace libra::switchd {

struct SwitchdOptions {
  UdpEndpoint listen;   // data port (port 0: any)
  UdpEndpoint control;  // control port (port 0: any)
  dataplane::PipelineProfile profile = dataplane::PipelineProfile::Tofino1();
  double drop_rate = 0;  // injected loss, on ingress and on egress
  std::uint64_t drop_seed = 1;
  std::size_t batch = 256;  // datagrams per recvmmsg / sendmmsg
  // Failure injection for tests: the process kills itself (SIGKILL, as a
  // crash would) when the first DATA of this epoch arrives. Negative: never.
  std::int64_t die_at_epoch = -1;
  // "model" (the C++ pipeline behind the UDP socket) or "xdp" (the XDP
  // program attached to `interfaces`, the socket serving only its upcalls).
  // When XDP cannot be loaded or attached, switchd says so in one line on
  // stderr and runs the model.
  std::string dataplane = "model";
  std::vector<std::string> interfaces;
};

class SwitchDaemon {
 public:
  // Binds both ports; throws std::runtime_error (naming the address) on failure.
  explicit SwitchDaemon(const SwitchdOptions& options);
  ~SwitchDaemon();

  UdpEndpoint data_endpoint() const;
  // "tcp://a.b.c.d:port" as bound.
  std::string control_endpoint() const;
  // The back end that runs: "model" or "xdp".
  std::string dataplane() const;

  // Serves until `stop` becomes true (checked at least every 100 ms).
  void Run(const std::atomic<bool>& stop);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace libra::switchd
