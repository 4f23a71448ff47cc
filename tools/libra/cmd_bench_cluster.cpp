// `libra bench cluster`: plain parameter server against Libra on an emulated
// cluster of network namespaces with rate-limited links (needs root). See
// src/cluster/cluster_bench.h and docs/PERFORMANCE.md.
#include <memory>

#include "cluster/cluster_bench.h"
#include "commands.h"

namespace libra::tool {
void AddBenchClusterCommand(CLI::App& bench, Runner& run) {
  auto options = std::make_shared<cluster::ClusterBenchOptions>();
  CLI::App* sub = bench.add_subcommand(
      "cluster",
      "Plain PS against Libra on network namespaces with shaped links (root); JSON + figures");
  sub->add_option("--out", options->out_dir, "Directory for data, logs, report and figures")
      ->capture_default_str();
  sub->add_option("--workloads", options->workloads,
                  "paper-30k (skew 0.85, 30,000 hot keys), paper-full (the whole switch), "
                  "skewed-full (skew 1.3, the whole switch), steep-full (skew 1.6, the whole "
                  "switch); paper-paying, skewed-paying, steep-paying: the whole switch, only "
                  "keys that half of the workers push per epoch")
      ->check(CLI::IsMember({"paper-30k", "paper-full", "skewed-full", "paper-paying",
                             "skewed-paying", "steep-full", "steep-paying"}))
      ->delimiter(',');
  sub->add_option("--models", options->models, "lr, fm, deepfm")
      ->check(CLI::IsMember({"lr", "fm", "deepfm"}))
      ->delimiter(',');
  sub->add_option("--workers", options->workers, "Worker counts")
      ->check(CLI::Range(1, 12))
      ->delimiter(',');
  sub->add_option("--servers", options->servers, "Server counts")
      ->check(CLI::Range(1, 3))
      ->delimiter(',');
  sub->add_option("--rows", options->rows, "Rows per data set (10% held out)")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{1000}, uint64_t{100'000'000}));
  sub->add_option("--batch", options->batch, "Rows per worker per iteration")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1'000'000u));
  sub->add_option("--epochs", options->epochs, "Passes over the training rows")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1000u));
  sub->add_option("--rate-mbit", options->rate_mbit,
                  "Rates of each direction of each host link (a list: every configuration at "
                  "each, e.g. 20,100,1000)")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 100000.0))
      ->delimiter(',');
  sub->add_option("--capacity", options->capacity,
                  "auto: of each workload's hot set, the prefix the cost model predicts pays on "
                  "these links (maybe none: Libra runs plain); forced: the workload's set as it "
                  "is; a number: that many switch cells, forced")
      ->capture_default_str();
  // Both runs of a configuration take the same links; a plain run marks
  // no packet, so the bands change nothing for it.
  sub->add_flag_callback(
      "--host-fifo", [options] { options->host_band = false; },
      "Each host sends through one FIFO (by default a host's queue serves the hot path's "
      "packets, marked low-delay, first, as Linux's default qdisc pfifo_fast does)");
  sub->add_flag_callback(
      "--port-fifo", [options] { options->port_band = false; },
      "Each switch port is one FIFO (by default it serves the switch's own packets first, "
      "from a strict-priority queue the switch program chooses, as on Tofino)");
  sub->add_option("--loss", options->loss_percent, "Random loss (%) on every host's sent packets")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 50.0));
  sub->add_option("--dataplane", options->dataplane,
                  "The switch's back end: model (the C++ pipeline in switchd) or xdp (the XDP "
                  "program on the switch namespace's ports; both runs then take links set up "
                  "for it)")
      ->check(CLI::IsMember({"model", "xdp"}))
      ->capture_default_str();
  sub->add_option("--target-loss", options->target_loss,
                  "Held-out log loss to time (0: the plain run's final loss + 1e-4)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--run-timeout", options->run_timeout_s, "Seconds allowed for one training run")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sub->add_option("--seed", options->seed, "Seed of data and model")->capture_default_str();
  sub->add_option("--repeat", options->repeat,
                  "Rounds of each configuration (plain and Libra again with the first round's "
                  "hot set, alternating which runs first); a table of the median speedups follows")
      ->capture_default_str()
      ->check(CLI::Range(1, 20));
  sub->add_flag("--verbose", options->verbose, "Echo every node's output");
  sub->callback([&run, options] {
    run = [options] { return cluster::RunClusterBench(*options, SelfPath()); };
  });
}

}  // namespace libra::tool
