// `libra`: one command for everything a user runs. See README.md.
#include <iostream>

#include "commands.h"

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

  CLI11_PARSE(app, argc, argv);
  if (!run) {
    std::cerr << app.help() << std::endl;
    return 2;
  }
  return run();
}
