// `libra launch -s M -w N [--timeout S] [Libra flags] -- PROGRAM ARGS`
//
// The Libra flags only set the LIBRA_* environment of every node (see
// docs/hotpath.md, "Turning it on"); --local-switch also starts a
// `libra switchd` on loopback for the job and stops it afterwards.
#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include "commands.h"
#include "launch/launcher.h"
#include "train/libra_options.h"
#include "train/local_switchd.h"

namespace libra::tool {

namespace {
struct LaunchFlags {
  int servers = 1;
  int workers = 1;
  double timeout_s = 0;
  std::vector<std::string> command;
  // Libra
  bool local_switch = false;
  std::string switch_address;
  std::string switch_control;
  std::string hot_set;
  int sample_epochs = 0;
  std::string capacity = "auto";
  uint64_t link_mbit = 0;
  std::string plain_epoch;
  std::string job_token;
  bool insecure = false;
};

int RunLaunch(const LaunchFlags& flags) {
  LocalJob job;
  job.num_servers = flags.servers;
  job.num_workers = flags.workers;
  job.command = flags.command;
  job.secure = !flags.insecure;
  std::optional<train::LocalSwitchd> switchd;
  if (flags.local_switch) {
    if (!flags.switch_address.empty()) {
      std::cerr << "launch: --local-switch and --switch exclude each other\n";
      return 2;
    }
    try {
      switchd.emplace("/proc/self/exe");
    } catch (const std::exception& e) {
      std::cerr << "launch: cannot start the local switch: " << e.what() << "\n";
      return 1;
    }
    job.env["LIBRA_SWITCH"] = switchd->data_address();
    job.env["LIBRA_SWITCH_CONTROL"] = switchd->control_address();
  } else if (!flags.switch_address.empty()) {
    if (flags.switch_control.empty()) {
      std::cerr
          << "launch: --switch needs --switch-control (where the controller installs the job)\n";
      return 2;
    }
    job.env["LIBRA_SWITCH"] = flags.switch_address;
    job.env["LIBRA_SWITCH_CONTROL"] = flags.switch_control;
  }
  if (!flags.hot_set.empty()) job.env["LIBRA_HOT_SET"] = flags.hot_set;
  if (flags.sample_epochs > 0) job.env["LIBRA_SAMPLE_EPOCHS"] = std::to_string(flags.sample_epochs);
  if (flags.local_switch || !flags.switch_address.empty()) {
    try {
      train::CheckCapacity(flags.capacity);
    } catch (const std::invalid_argument& e) {
      std::cerr << "launch: " << e.what() << "\n";
      return 2;
    }
    if (flags.hot_set.empty()) job.env["LIBRA_CAPACITY"] = flags.capacity;
    if (flags.link_mbit > 0) job.env["LIBRA_LINK_MBIT"] = std::to_string(flags.link_mbit);
    if (!flags.plain_epoch.empty()) job.env["LIBRA_PLAIN_EPOCH"] = flags.plain_epoch;
    // Every node runs here; so does the switch with --local-switch.
    job.env["LIBRA_SHARED_CORES"] =
        std::to_string(std::max(1u, std::thread::hardware_concurrency()));
  }
  if (!flags.job_token.empty()) job.env["LIBRA_JOB_TOKEN"] = flags.job_token;
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
  sub->add_flag("--local-switch", flags->local_switch,
                "Libra: start a libra switchd on loopback for the job");
  sub->add_option("--switch", flags->switch_address, "Libra: a switchd's UDP data address");
  sub->add_option("--switch-control", flags->switch_control,
                  "Libra: that switchd's control address (with --switch)");
  sub->add_option("--hot-set", flags->hot_set, "Libra: hot-set file (else: sampling phase)")
      ->check(CLI::ExistingFile);
  sub->add_option("--sample-epochs", flags->sample_epochs,
                  "Libra: pushes per worker in the sampling phase (default 20)")
      ->check(CLI::Range(1, 1 << 30));
  sub->add_option("--capacity", flags->capacity,
                  "Libra: hot set when sampling: auto (what the cost model predicts pays, maybe "
                  "none) or a number of switch cells (0: the whole switch)")
      ->capture_default_str();
  sub->add_option("--link-mbit", flags->link_mbit,
                  "Libra: every host's link in Mbit/s, for the cost model (default: 10 Gbit/s)");
  sub->add_option("--plain-epoch", flags->plain_epoch,
                  "Libra: the cost model's plain epoch: measured (timed while sampling, the "
                  "default) or predicted (at --link-mbit)")
      ->check(CLI::IsMember({"measured", "predicted"}));
  sub->add_option("--job-token", flags->job_token, "Libra: the switch job's token");
  sub->add_flag("--insecure", flags->insecure,
                "No PS_JOB_SECRET: the job's ZeroMQ connections without CURVE (as PS-lite's)");
  sub->add_option("command", flags->command, "PROGRAM ARGS (after --)")->required();
  sub->callback([&run, flags] { run = [flags] { return RunLaunch(*flags); }; });
}

}  // namespace libra::tool
