#include "switchd/switch_daemon.h"

#include <algorithm>
#include <csignal>
#include <iostream>
#include <stdexcept>
#include <zmq.hpp>

#include "net/udp_socket.h"
#include "switchd/control_handler.h"
#include "switchd/loss_injector.h"
#if defined(LIBRA_HAVE_XDP)
#include "xdp/xdp_program.h"
#endif

namespace libra::switchd {

struct SwitchDaemon::Impl {
  explicit Impl(const SwitchdOptions& options)
      : program(options.profile),
        socket(options.listen, net::UdpSocketOptions{.tos = net::kHotPathTos}),
        control(context, zmq::socket_type::rep),
        coalescing(socket.EnableReceiveCoalescing()),
        receive(options.batch, coalescing),
        send(socket.fd(), 2 * options.batch, /*segmentation=*/true),
        ingress_loss(options.drop_rate, options.drop_seed),
        egress_loss(options.drop_rate, options.drop_seed ^ 0x5bd1e995u),
        die_at_epoch(options.die_at_epoch) {
    const std::string host_port = options.control.ToString();
    const std::string address =
        "tcp://" + host_port.substr(0, host_port.rfind(':')) + ":" +
        (options.control.port == 0 ? std::string("*") : std::to_string(options.control.port));
    try {
      control.set(zmq::sockopt::linger, 0);
      // A request over kMaxControlRequestBytes is answered with an error
      // (ServeControlRequest); one over this is dropped (and its sender
      // disconnected) by ZeroMQ at its size prefix, before it is buffered.
      control.set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(kMaxControlFrameBytes));
      control.bind(address);
    } catch (const zmq::error_t& e) {
      throw std::runtime_error("control port " + address + ": " + e.what());
    }
    if (options.dataplane == "xdp") LoadXdp(options);
  }

  // The XDP back end, or the model with one line saying why not.
  void LoadXdp(const SwitchdOptions& options) {
    std::string error;
#if defined(LIBRA_HAVE_XDP)
    if (options.interfaces.empty()) {
      error = "no --interface to attach to";
    } else if (auto loaded = xdp::XdpProgram::Load(options.profile, socket.local(), &error)) {
      // The program itself drops and dies (xdp_program.h), from the seeds
      // of the model's streams; the upcalls it passes have been through its
      // ingress loss already.
      loaded->SetFailureInjection(options.drop_rate, options.drop_seed,
                                  options.drop_seed ^ 0x5bd1e995u, options.die_at_epoch);
      bool attached = true;
      for (const std::string& interface : options.interfaces) {
        attached = attached && loaded->Attach(interface, &error);
      }
      if (attached) xdp = std::move(loaded);
    }
#else
    error = "this build has no XDP program (needs clang, bpftool and libbpf-dev)";
#endif
    if (xdp == nullptr) {
      std::cerr << "switchd: --dataplane xdp unavailable (" << error
                << "); running --dataplane model" << std::endl;
    }
  }

  dataplane::SwitchBackend& backend() {
#if defined(LIBRA_HAVE_XDP)
    if (xdp != nullptr) return *xdp;
#endif
    return program;
  }

  // A crash in the middle of an epoch, for the switch-failure tests: state
  // and packets in flight are lost, nothing is flushed.
  void DieAtEpoch(std::span<const std::uint8_t> payload) const {
    wire::Header header;
    if (wire::DecodeHeader(payload, &header) != wire::DecodeError::kNone) return;
    if (header.type != wire::MessageType::kData) return;
    if (header.epoch != static_cast<std::uint64_t>(die_at_epoch)) return;
    std::cerr << "switchd: dying at epoch " << header.epoch << " (--die-at-epoch)" << std::endl;
    ::raise(SIGKILL);
  }

  // Drains up to `max_batches` recvmmsg batches; returns false when the
  // socket ran dry. A short batch is not a reason to stop: the senders keep
  // windows in flight, so more is usually queued by the time the batch is
  // answered, and going back to zmq_poll would cost a wakeup per batch.
  bool DrainData(int max_batches) {
    for (int b = 0; b < max_batches; ++b) {
      const std::size_t n = receive.Receive(socket.fd());
      if (n == 0) return false;
      io.datagrams_received += n;
      outputs.Clear();
      for (std::size_t i = 0; i < n; ++i) {
        if (!xdp_runs() && ingress_loss.ShouldDrop()) [[unlikely]] {
          ++io.ingress_loss_injected;
          continue;
        }
        if (die_at_epoch >= 0) [[unlikely]]
          DieAtEpoch(receive.payload(i));
#if defined(LIBRA_HAVE_XDP)
        if (xdp != nullptr) {
          xdp->HandleUpcall(receive.payload(i), receive.source(i), outputs);
          continue;
        }
#endif
        program.Process(receive.payload(i), receive.source(i), outputs);
      }
      // The replies go out straight from the program's output buffers, which
      // stay untouched until the next batch, grouped by destination (in
      // order within each): an UPDATE's copies to every worker and its ACK
      // would otherwise interleave, and only consecutive datagrams to one
      // destination leave as one segmented send.
      order.clear();
      for (std::size_t i = 0; i < outputs.size(); ++i) {
        if (egress_loss.ShouldDrop()) [[unlikely]] {
          ++io.egress_loss_injected;
          continue;
        }
        order.push_back(i);
      }
      std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return outputs[a].destination.Key() < outputs[b].destination.Key();
      });
      for (const std::size_t i : order) {
        send.PushView(outputs[i].payload(), outputs[i].destination);
        ++io.datagrams_sent;
      }
      send.Flush();
      io.send_refused = send.refused();
    }
    return true;
  }

  bool xdp_runs() const {
#if defined(LIBRA_HAVE_XDP)
    return xdp != nullptr;
#else
    return false;
#endif
  }

  // The loss the XDP program injected, in the counters switchd reports
  // (ingress: all of it; egress: with switchd's own, on the fan-out).
  void FoldXdpLoss() {
#if defined(LIBRA_HAVE_XDP)
    if (xdp == nullptr) return;
    const xdp::XdpCounters c = xdp->xdp_counters();
    io.ingress_loss_injected = c.ingress_loss_injected;
    io.egress_loss_injected += c.egress_loss_injected - xdp_egress_loss_folded;
    xdp_egress_loss_folded = c.egress_loss_injected;
#endif
  }

  void ServeControl() {
    zmq::message_t request;
    while (control.recv(request, zmq::recv_flags::dontwait)) {
      // REP answers a whole message: its later frames must be read (they
      // arrive together with the first) before the reply can be sent.
      std::size_t frames = 1;
      for (bool more = request.more(); more; ++frames) {
        zmq::message_t rest;
        (void)control.recv(rest, zmq::recv_flags::none);
        more = rest.more();
      }
      FoldXdpLoss();
      const std::string text = ServeControlRequest(request.to_string_view(), frames, backend(), io);
      control.send(zmq::buffer(text), zmq::send_flags::none);
    }
  }

  dataplane::Program program;
  net::UdpSocket socket;
  zmq::context_t context{1};
  zmq::socket_t control;
  const bool coalescing;  // the kernel passes segmented sends as one message
  net::ReceiveBatch receive;
  net::SendQueue send;
  dataplane::OutputBatch outputs;
  std::vector<std::size_t> order;  // the outputs sent, by destination
  LossInjector ingress_loss;
  LossInjector egress_loss;
  const std::int64_t die_at_epoch;
  IoCounters io;
#if defined(LIBRA_HAVE_XDP)
  std::unique_ptr<xdp::XdpProgram> xdp;  // set: the XDP back end runs, not `program`
  std::uint64_t xdp_egress_loss_folded = 0;
#endif
};

SwitchDaemon::SwitchDaemon(const SwitchdOptions& options)
    : impl_(std::make_unique<Impl>(options)) {}

SwitchDaemon::~SwitchDaemon() = default;

UdpEndpoint SwitchDaemon::data_endpoint() const { return impl_->socket.local(); }

std::string SwitchDaemon::dataplane() const {
#if defined(LIBRA_HAVE_XDP)
  if (impl_->xdp != nullptr) return "xdp";
#endif
  return "model";
}

std::string SwitchDaemon::control_endpoint() const {
  return impl_->control.get(zmq::sockopt::last_endpoint);
}

void SwitchDaemon::Run(const std::atomic<bool>& stop) {
  zmq::pollitem_t items[] = {
      {impl_->control.handle(), 0, ZMQ_POLLIN, 0},
      {nullptr, impl_->socket.fd(), ZMQ_POLLIN, 0},
  };
  while (!stop.load(std::memory_order_relaxed)) {
    try {
      zmq::poll(items, 2, std::chrono::milliseconds(100));
    } catch (const zmq::error_t& e) {
      if (e.num() == EINTR) continue;  // a signal; the loop checks `stop`
      throw;
    }
    if ((items[1].revents & ZMQ_POLLIN) != 0) {
      // Busy: keep draining, but look at the control port every 64 batches.
      while (impl_->DrainData(64) && !stop.load(std::memory_order_relaxed)) {
        impl_->ServeControl();
      }
    }
    if ((items[0].revents & ZMQ_POLLIN) != 0) impl_->ServeControl();
  }
}

}  // namespace libra::switchd
