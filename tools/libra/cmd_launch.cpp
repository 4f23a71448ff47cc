// `libra launch -s M -w N [--timeout S] -- PROGRAM ARGS`
#include <iostream>
#include <memory>

#include "commands.h"
#include "launch/launcher.h"

namespace libra::tool {

namespace {
struct LaunchFlags {
  int servers = 1;
  int workers = 1;
  double timeout_s = 0;
  std::vector<std::string> command;
};

int RunLaunch(const LaunchFlags& flags) {
  LocalJob job;
  job.num_servers = flags.servers;
  job.num_workers = flags.workers;
  job.command = flags.command;
  return RunProcesses(LocalJobProcesses(job), flags.timeout_s);
}
}  // namespace

void AddLaunchCommand(CLI::App& parent, Runner& run) {
  auto flags = std::make_shared<LaunchFlags>();
  CLI::App* sub = parent.add_subcommand(
      "launch", "Run a PS-lite program as a local job: a scheduler, M servers and N workers");
  sub->add_option("-s,--servers", flags->servers, "number of servers")->check(CLI::Range(1, 256));
  sub->add_option("-w,--workers", flags->workers, "number of workers")->check(CLI::Range(1, 256));
  sub->add_option("--timeout", flags->timeout_s, "stop everything after this many seconds")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("command", flags->command, "PROGRAM ARGS (after --)")->required();
  sub->callback([&run, flags] { run = [flags] { return RunLaunch(*flags); }; });
}

}  // namespace libra::tool
