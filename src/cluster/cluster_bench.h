// `libra bench cluster`: the same training with the plain parameter server
// and with Libra on an emulated cluster (NetnsCluster: one namespace per
// node, shaped links, switchd in the switch's namespace), over a matrix of
// workloads, models, worker and server counts and link rates. For each
// configuration it measures throughput, time to a target held-out loss,
// bytes on every server link and CPU time of every process, and sets the
// measured speedup beside the bound the hot-set coverage predicts
// (speedup_bound.h). Each run is RunOnCluster (cluster_run.h). Writes a
// JSON report (and figures, through scripts/plot_cluster.py) to out_dir.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace libra::cluster {

// A data set and its hot-set size.
struct Workload {
  std::string name;
  double skew = 0.85;         // gen-data --skew
  uint64_t hot_keys = 30000;  // hot-set capacity in keys; 0: the whole switch
  // Keys pushed by fewer than this share of the workers per epoch (on
  // average) stay cold: a hot cell costs the hot path a fixed amount every
  // epoch, which only keys that several workers push repay.
  double min_worker_share = 0;
};

// The workloads of the issue: the paper's calibration with 30,000 hot keys
// and with the whole switch, and a highly skewed set with the whole switch;
// a steeper one (skew 1.6) to show how the gain grows with skew; and each
// with the whole switch but only the keys at least half of the workers push
// in an epoch ("paying").
std::vector<Workload> DefaultWorkloads();

struct ClusterBenchOptions {
  std::string out_dir = "libra-cluster-bench";
  std::vector<std::string> workloads{"paper-30k", "paper-full", "skewed-full"};
  std::vector<std::string> models{"lr", "deepfm"};
  std::vector<int> workers{2, 4, 8};
  std::vector<int> servers{1, 2};
  uint64_t rows = 200'000;  // per data set (10% held out)
  uint32_t batch = 500;     // rows per worker per iteration
  uint32_t epochs = 2;
  // Each direction of every host link; every configuration runs at each
  // rate. 20 Mbit/s keeps the links the bottleneck: at 40 the Libra runs (up
  // to 11 processes and a software switch on 2 cores) used 1.4-1.8 cores on
  // average (docs/PERFORMANCE.md).
  std::vector<double> rate_mbit{20};
  // "auto": of the workload's hot set, the prefix the cost model
  // (hot/cost_model.h) predicts pays on these links, maybe none (then the
  // Libra run is plain and says why); "forced": the workload's set as it
  // is; a number: that many switch cells, forced.
  std::string capacity = "auto";
  double loss_percent = 0;  // on every host's outgoing packets
  bool host_band = true;    // LinkShape::host_band, for both runs
  bool port_band = true;    // LinkShape::port_band, for both runs
  // The switch's back end (ClusterRunOptions::dataplane); with "xdp" the
  // plain runs take the same links (LinkShape::xdp_switch) as the Libra ones.
  std::string dataplane = "model";
  double target_loss = 0;  // held-out log loss to reach; 0: the plain run's final loss + 1e-4
  double run_timeout_s = 600;
  // Rounds of each configuration: the first as always (plain, the hot set
  // chosen knowing it, Libra), then plain and Libra again with that set,
  // alternating which goes first; the report gives each round and the
  // median speedup (one run's speedup moves by 10-20 % on a busy machine).
  int repeat = 1;
  uint64_t seed = 1;
  bool verbose = false;  // echo the nodes' output
};

// `self` is the path of the `libra` binary. Returns an exit code (non-zero
// without root, with the reason printed).
int RunClusterBench(const ClusterBenchOptions& options, const std::string& self);

}  // namespace libra::cluster
