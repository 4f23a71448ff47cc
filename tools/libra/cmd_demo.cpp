// `libra demo`: the main job, with no arguments (see src/train/demo.h).
#include <unistd.h>

#include <memory>

#include "commands.h"
#include "train/demo.h"

namespace libra::tool {

void AddDemoCommand(CLI::App& parent, Runner& run) {
  auto options = std::make_shared<train::DemoOptions>();
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
  sub->add_option("--capacity", options->capacity_cells, "Hot-set capacity in switch cells")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 24));
  sub->add_option("--libra", options->libra,
                  "Runs: the plain PS (off), Libra (on) or both side by side")
      ->capture_default_str()
      ->check(CLI::IsMember({"on", "off", "both"}));
  sub->callback(
      [&run, options] { run = [options] { return train::RunDemo(*options, SelfPath()); }; });
}

}  // namespace libra::tool
