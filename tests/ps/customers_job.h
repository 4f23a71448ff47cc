// A job of multi_worker_program (PS-lite's test_kv_app_multi_workers
// pattern): `worker_processes` worker processes whose `customers` customers
// each call Start(c) and count as workers, so DMLC_NUM_WORKER is processes x
// customers. MULTI_WORKER_PROGRAM is set by tests/ps/CMakeLists.txt.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "launch/launcher.h"

namespace libra::test_support {

struct CustomersCase {
  int servers;
  int worker_processes;
  int customers;
};

// "2s1x2w": 2 servers, 1 process of 2 customers.
inline std::string CustomersCaseName(const testing::TestParamInfo<CustomersCase>& info) {
  return std::to_string(info.param.servers) + "s" + std::to_string(info.param.worker_processes) +
         "x" + std::to_string(info.param.customers) + "w";
}

// Runs `multi_worker_program CUSTOMERS args...` as a local job, with `env`
// added for every node; the job's exit status, its output in `output`.
inline int RunCustomersJob(const CustomersCase& c, const std::vector<std::string>& args,
                           const std::map<std::string, std::string>& env,
                           std::ostringstream* output) {
  LocalJob job;
  job.num_servers = c.servers;
  job.num_workers = c.worker_processes;
  job.command = {MULTI_WORKER_PROGRAM, std::to_string(c.customers)};
  job.command.insert(job.command.end(), args.begin(), args.end());
  std::vector<ProcessSpec> processes = LocalJobProcesses(job);
  for (ProcessSpec& p : processes) {
    p.env["DMLC_NUM_WORKER"] = std::to_string(c.worker_processes * c.customers);
    p.env["PS_START_TIMEOUT"] = "20";
    for (const auto& [name, value] : env) p.env[name] = value;
  }
  RunOptions options;
  options.timeout_s = 60;
  options.output = output;
  return RunProcesses(processes, options, nullptr);
}

}  // namespace libra::test_support
