// `libra bench switchd --dataplane ...`: DATA throughput of `libra switchd`
// on veths between network namespaces, for several back ends in one run.
//
// A NetnsCluster of generator hosts (its own name prefix, so it never meets
// a training cluster's namespaces) and a switch namespace; the switch's
// ports have the XDP program when the XDP back end runs, the hosts' ends an
// XDP_PASS program either way (LinkShape::xdp_switch), so both back ends see
// the same links. Rounds alternate between the back ends (model, xdp,
// model, xdp, ...), each with a fresh `libra switchd` and the same traffic,
// replayed by generator threads in the hosts' namespaces
// (bench/traffic_replay.h), so that the back ends share the minutes and
// whatever else the machine does in them.
//
// The switch's CPU time: for the model, the switchd process's user and
// system time (/proc/PID/stat); for XDP, the kernel's run time of the
// program (bpf_prog_info.run_time_ns, bpf_run_time.h): its own runs only,
// not veth's receive or XDP_TX, which run in the same softirq as the
// generator's ACK receive and cannot be told apart from it. Every round
// also reports the softirq time of all CPUs (/proc/stat), which holds
// those, as a bound from the other side.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/program_benchmark.h"

namespace libra::cluster {

struct SwitchdNetnsBenchOptions {
  std::vector<std::string> dataplanes{"model", "xdp"};
  int rounds = 2;        // per back end
  double seconds = 3.0;  // per round
  int generators = 1;    // generator threads, each in a host namespace of its own
  int window = 64;       // un-ACKed DATA per worker
  dataplane::BenchTraffic traffic;
};

// `self` is the `libra` binary. Returns the report: per round and per back
// end packets_per_second and packets_per_switch_cpu_second (with
// switch_cpu_source naming the measure), and with both back ends
// xdp_over_model_per_switch_cpu_second. Throws std::runtime_error when the
// cluster cannot be built or a switch does not come up or stalls.
nlohmann::json RunSwitchdNetnsBench(const SwitchdNetnsBenchOptions& options,
                                    const std::string& self);

}  // namespace libra::cluster
