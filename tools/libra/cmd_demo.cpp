// `libra demo`: the main job, with no arguments (see src/cluster/demo.h).
#include <unistd.h>

#include <memory>

#include "cluster/demo.h"
#include "commands.h"

namespace libra::tool {

void AddDemoCommand(CLI::App& parent, Runner& run) {
  auto options = std::make_shared<cluster::DemoOptions>();
  CLI::App* sub = parent.add_subcommand(
      "demo",
      "Train on synthetic CTR data with the plain PS and with Libra, side by side (no flags "
      "needed)");
  sub->add_option("--out", options->out_dir,
                  "Directory for the data set, hot set, report.json and figures")
      ->capture_default_str();
  sub->add_option("--data", options->data_path, "Train on this file instead of synthetic data");
  sub->add_option("--rows", options->rows, "Rows of the synthetic data set")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{100}, uint64_t{1} << 32));
  sub->add_option("--model", options->model, "lr, fm or deepfm")
      ->capture_default_str()
      ->check(CLI::IsMember({"lr", "fm", "deepfm"}));
  sub->add_option("--epochs", options->epochs, "Passes over the training rows")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1000u));
  sub->add_option("--workers,-w", options->workers, "Workers")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  sub->add_option("--servers,-s", options->servers, "Servers")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  sub->add_option("--batch", options->batch, "Rows per worker per iteration")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1'000'000u));
  sub->add_option("--capacity", options->capacity,
                  "auto: of the keys that fit the switch, those the cost model predicts pay on "
                  "these links (maybe none: Libra runs plain); a number: that many switch cells, "
                  "forced (0: the whole switch)")
      ->capture_default_str();
  sub->add_option("--network", options->network,
                  "emulated: network namespaces with shaped links (root); loopback: this "
                  "machine's loopback (default: emulated when it can be built, else loopback)")
      ->check(CLI::IsMember({"emulated", "loopback"}));
  sub->add_option("--rate-mbit", options->rate_mbit,
                  "Emulated: each direction of each host link (a starved link, where Libra pays)")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 100000.0));
  sub->add_option("--sweep-mbit", options->sweep_mbit,
                  "Emulated: link speeds of the sweep after the main run")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 100000.0))
      ->delimiter(',');
  sub->add_flag_callback(
      "--no-sweep", [options] { options->sweep_mbit.clear(); }, "Emulated: no sweep");
  sub->add_option("--sweep-epochs", options->sweep_epochs, "Epochs of each run of the sweep")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1000u));
  sub->add_option("--run-timeout", options->run_timeout_s,
                  "Emulated: seconds allowed for one training run")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sub->add_option("--libra", options->libra,
                  "Runs: the plain PS (off), Libra (on) or both side by side")
      ->capture_default_str()
      ->check(CLI::IsMember({"on", "off", "both"}));
  sub->callback(
      [&run, options] { run = [options] { return cluster::RunDemo(*options, SelfPath()); }; });
}

}  // namespace libra::tool
