// Runs a parameter-server job on this machine, like PS-lite's local.sh: a
// scheduler, M servers and N workers of one program, each with the DMLC_*
// environment it needs. Output lines are prefixed with "[role rank]". If any
// process fails, or the time runs out, or the launcher is interrupted, the
// others are stopped (SIGTERM, then SIGKILL).
#pragma once

#include <sys/types.h>

#include <iosfwd>
#include <map>
#include <string>
#include <vector>

namespace libra {

// One process to run.
struct ProcessSpec {
  std::string name;                        // output prefix, e.g. "worker 2"
  std::vector<std::string> argv;           // argv[0] is looked up in PATH
  std::map<std::string, std::string> env;  // added to the launcher's environment
};

struct LocalJob {
  int num_servers = 1;
  int num_workers = 1;
  std::vector<std::string> command;        // PROGRAM ARGS
  std::map<std::string, std::string> env;  // extra variables for every node
  // Every node gets one random PS_JOB_SECRET (unless the caller's
  // environment or `env` has one): the job's ZeroMQ connections are then
  // encrypted and only its own nodes can send on them (src/ps/zmq_curve.h).
  bool secure = true;
};

// The scheduler, servers and workers of `job`, on 127.0.0.1 with a free port.
std::vector<ProcessSpec> LocalJobProcesses(const LocalJob& job);

// Runs all processes to completion. Returns 0 if all exited with status 0;
// otherwise the first failure's status (124 on timeout, 130 if interrupted).
// timeout_s <= 0 means no limit.
int RunProcesses(const std::vector<ProcessSpec>& processes, double timeout_s);

// What one process of RunProcesses used, from wait4(): its CPU time includes
// that of its own waited-for children.
struct ProcessUsage {
  std::string name;
  int status = 0;
  double user_seconds = 0;
  double system_seconds = 0;
  double wall_seconds = 0;  // from start until it was reaped
};

struct RunOptions {
  double timeout_s = 0;            // <= 0: no limit
  std::ostream* output = nullptr;  // the prefixed output lines; nullptr: std::cout
};

// As above; also fills `usage` (one entry per process, in order) if given.
int RunProcesses(const std::vector<ProcessSpec>& processes, const RunOptions& options,
                 std::vector<ProcessUsage>* usage);

// A TCP port on 127.0.0.1 that is free right now.
int FindFreePort();

// CPU seconds (user + system) a running process has used so far, from
// /proc/PID/stat; 0 when it cannot be read.
double CpuSecondsOf(pid_t pid);

}  // namespace libra
