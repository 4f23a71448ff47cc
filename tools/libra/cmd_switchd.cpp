// `libra switchd`: the software switch (src/switchd) as a process.
#include <csignal>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "commands.h"
#include "switchd/switch_daemon.h"

namespace libra::tool {
namespace {

struct SwitchdFlags {
  std::string listen = "127.0.0.1:9000";
  std::string control = "127.0.0.1:9001";
  std::string profile = "tofino1";
  double drop_rate = 0;
  std::uint64_t drop_seed = 1;
  std::int64_t die_at_epoch = -1;
  std::string dataplane = "model";
  std::vector<std::string> interfaces;
};

std::atomic<bool> stop_requested{false};

extern "C" void RequestStop(int) { stop_requested.store(true); }

int RunSwitchd(const SwitchdFlags& flags) {
  switchd::SwitchdOptions options;
  const auto listen = UdpEndpoint::Parse(flags.listen);
  const auto control = UdpEndpoint::Parse(flags.control);
  const auto profile = dataplane::PipelineProfile::ByName(flags.profile);
  if (!listen || !control) {
    std::cerr << "switchd: --" << (listen ? "control" : "listen")
              << " must be an IPv4 address:port, e.g. 127.0.0.1:9000\n";
    return 2;
  }
  if (!profile) {
    std::cerr << "switchd: --profile: unknown profile '" << flags.profile << "' (known: tofino1)\n";
    return 2;
  }
  options.listen = *listen;
  options.control = *control;
  options.profile = *profile;
  options.drop_rate = flags.drop_rate;
  options.drop_seed = flags.drop_seed;
  options.die_at_epoch = flags.die_at_epoch;
  options.dataplane = flags.dataplane;
  options.interfaces = flags.interfaces;

  std::signal(SIGTERM, RequestStop);
  std::signal(SIGINT, RequestStop);
  try {
    switchd::SwitchDaemon daemon(options);
    // The first line tells scripts and tests where the switch listens.
    std::cout << nlohmann::json{{"data", daemon.data_endpoint().ToString()},
                                {"control", daemon.control_endpoint()},
                                {"profile", options.profile.name},
                                {"dataplane", daemon.dataplane()}}
                     .dump()
              << std::endl;
    daemon.Run(stop_requested);
  } catch (const std::exception& e) {
    std::cerr << "switchd: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

void AddSwitchdCommand(CLI::App& parent, Runner& run) {
  auto flags = std::make_shared<SwitchdFlags>();
  CLI::App* sub = parent.add_subcommand(
      "switchd", "Software switch: in-network aggregation over UDP, Tofino pipeline rules");
  sub->add_option("--listen", flags->listen, "UDP data address:port (port 0: any)")
      ->capture_default_str();
  sub->add_option("--control", flags->control, "control address:port (ZeroMQ, JSON)")
      ->capture_default_str();
  sub->add_option("--profile", flags->profile, "pipeline profile")->capture_default_str();
  sub->add_option("--drop-rate", flags->drop_rate, "injected loss on ingress and egress")
      ->check(CLI::Range(0.0, 1.0));
  sub->add_option("--drop-seed", flags->drop_seed, "seed of the injected loss");
  sub->add_option("--die-at-epoch", flags->die_at_epoch,
                  "failure injection: SIGKILL itself when the first DATA of this epoch arrives")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--dataplane", flags->dataplane,
                  "model (the C++ pipeline) or xdp (the XDP program on --interface)")
      ->check(CLI::IsMember({"model", "xdp"}))
      ->capture_default_str();
  sub->add_option("--interface", flags->interfaces,
                  "with --dataplane xdp: attach the XDP program to this interface (repeatable)");
  sub->callback([&run, flags] { run = [flags] { return RunSwitchd(*flags); }; });
}

}  // namespace libra::tool
