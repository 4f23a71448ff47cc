// `libra switchd-stats ADDR`: a running switch's counters as JSON.
#include <iostream>
#include <memory>

#include "commands.h"
#include "hotpath/controller/switch_control_client.h"

namespace libra::tool {
namespace {

struct SwitchdStatsFlags {
  std::string control;
  int timeout_ms = 2000;
};

int RunSwitchdStats(const SwitchdStatsFlags& flags) {
  try {
    hotpath::SwitchControlClient client(flags.control, std::chrono::milliseconds(flags.timeout_ms));
    nlohmann::json counters = client.Counters();
    counters.erase("ok");
    std::cout << counters.dump(2) << std::endl;
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "switchd-stats: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace

void AddSwitchdStatsCommand(CLI::App& parent, Runner& run) {
  auto flags = std::make_shared<SwitchdStatsFlags>();
  CLI::App* sub = parent.add_subcommand("switchd-stats", "Print a running switchd's counters");
  sub->add_option("ADDR", flags->control, "switchd control address:port")->required();
  sub->add_option("--timeout-ms", flags->timeout_ms, "give up after this long")
      ->check(CLI::PositiveNumber);
  sub->callback([&run, flags] { run = [flags] { return RunSwitchdStats(*flags); }; });
}

}  // namespace libra::tool
