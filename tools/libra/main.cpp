// `libra`: one command for everything a user runs. See README.md.
#include <unistd.h>

#include <iostream>
#include <optional>
#include <string>

#include "commands.h"
#include "launch/realtime.h"

std::string libra::tool::SelfPath() {
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  return n > 0 ? std::string(self, static_cast<size_t>(n)) : "libra";
}

bool libra::tool::EnterRealtime(const char* command) {
  const std::optional<std::string> why = libra::launch::EnterRealtimeScheduling();
  if (why) std::cerr << command << ": --realtime: " << *why << "\n";
  return !why;
}

int main(int argc, char** argv) {
  using namespace libra::tool;
  CLI::App app{
      "libra: in-network aggregation of hot parameters for sparse "
      "parameter-server training"};
  app.require_subcommand(1);
  Runner run;

  AddLaunchCommand(app, run);
  AddGenDataCommand(app, run);
  AddTrainCommand(app, run);
  AddDemoCommand(app, run);
  AddProfileCommand(app, run);
  AddHotsetDumpCommand(app, run);
  AddSwitchdCommand(app, run);
  AddSwitchdStatsCommand(app, run);

  CLI::App* bench = app.add_subcommand("bench", "Benchmarks that print and write JSON");
  bench->require_subcommand(1);
  AddBenchKvCommand(*bench, run);
  AddBenchDataplaneCommand(*bench, run);
  AddBenchSwitchdCommand(*bench, run);
  AddBenchClusterCommand(*bench, run);
  AddBenchOverheadCommand(*bench, run);

  CLI11_PARSE(app, argc, argv);
  if (!run) {
    std::cerr << app.help() << std::endl;
    return 2;
  }
  return run();
}
