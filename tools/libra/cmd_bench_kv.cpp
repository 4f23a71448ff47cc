// `libra bench kv --keys N --json FILE`: push, pull and push-pull throughput
// of the parameter server runtime, 1 server and 1 worker on loopback.
//
// Run by a user, the command launches a local job whose nodes are this same
// binary with the same flags (they see DMLC_ROLE and act as nodes). The
// worker times each operation `--repeat` times and reports the median. It
// runs twice: over TCP, and with DMLC_LOCAL=1 (Unix-domain sockets between
// processes of one machine, as PS-lite's DMLC_LOCAL does). With `--switch
// CAPACITY,...` it runs again over TCP through a local switchd for each
// capacity (`auto`: the cost model's set, maybe none; a number of cells, 0:
// the whole switch), sampling the first push, and reports each median
// against the TCP run's (`ratio_to_tcp`): what a PS-lite program that pushes
// and pulls the same keys in a loop pays for the switch.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "commands.h"
#include "launch/launcher.h"
#include "ps/ps.h"
#include "train/libra_options.h"
#include "train/local_switchd.h"

namespace libra::tool {

namespace {

struct BenchKvFlags {
  uint64_t keys = 10'000'000;
  int repeat = 5;
  std::string json_path;
  std::string node_json_path;                  // where the worker node writes its figures
  std::vector<std::string> switch_capacities;  // a run through a local switchd for each
};

// Keeps one float per key 0..n-1; push adds, pull copies out (the response
// must not alias the store, which later pushes change).
class DenseStore {
 public:
  void operator()(const ps::KVMeta& meta, const ps::KVPairs<float>& data,
                  ps::KVServer<float>* server) {
    size_t n = data.keys.size();
    if (store_.size() < n) store_.resize(n, 0.0f);
    ps::KVPairs<float> res;
    if (meta.push) {
      CHECK_EQ(data.vals.size(), n);
      for (size_t i = 0; i < n; ++i) store_[data.keys[i]] += data.vals[i];
    }
    if (meta.pull) {
      res.keys = data.keys;
      res.vals.resize(n);
      for (size_t i = 0; i < n; ++i) res.vals[i] = store_[data.keys[i]];
    }
    server->Response(meta, res);
  }

 private:
  std::vector<float> store_;
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <typename F>
double TimeMs(F f) {
  auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

int RunWorker(const BenchKvFlags& flags) {
  ps::KVWorker<float> kv(0, 0);
  ps::SArray<ps::Key> keys(flags.keys);
  ps::SArray<float> vals(flags.keys);
  for (uint64_t i = 0; i < flags.keys; ++i) {
    keys[i] = i;
    vals[i] = 1.0f;
  }
  std::vector<double> push_ms, pull_ms, pushpull_ms;
  for (int r = 0; r < flags.repeat; ++r) {
    push_ms.push_back(TimeMs([&] { kv.Wait(kv.ZPush(keys, vals)); }));
    ps::SArray<float> out;
    pull_ms.push_back(TimeMs([&] { kv.Wait(kv.ZPull(keys, &out)); }));
    CHECK_EQ(out.size(), flags.keys);
    CHECK_EQ(out[flags.keys - 1], static_cast<float>(r + 1) + r) << "pull returned a wrong sum";
    ps::SArray<float> both;
    pushpull_ms.push_back(TimeMs([&] { kv.Wait(kv.ZPushPull(keys, vals, &both)); }));
  }
  // Payload per call: keys and values for push; keys out and values back for
  // pull; both for push-pull.
  double mb = flags.keys * (sizeof(ps::Key) + sizeof(float)) / 1e6;
  nlohmann::json report;
  for (auto& [name, times, payload] :
       {std::tuple{"push", push_ms, mb}, std::tuple{"pull", pull_ms, mb},
        std::tuple{"pushpull", pushpull_ms, mb + flags.keys * sizeof(float) / 1e6}}) {
    double ms = Median(times);
    report[name] = {{"median_ms", ms}, {"mb_per_s", payload / (ms / 1000)}, {"runs_ms", times}};
  }
  std::ofstream(flags.node_json_path) << report.dump(2) << "\n";
  return 0;
}

int RunNode(const BenchKvFlags& flags) {
  ps::Start(0);
  std::unique_ptr<ps::KVServer<float>> server;
  if (ps::IsServer()) {
    server = std::make_unique<ps::KVServer<float>>(0);
    server->set_request_handle(DenseStore());
  }
  if (ps::IsWorker()) RunWorker(flags);
  ps::Finalize(0, true);
  return 0;
}

int RunBenchKv(const BenchKvFlags& flags) {
  if (std::getenv("DMLC_ROLE") != nullptr) return RunNode(flags);
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) {
    std::cerr << "bench kv: cannot find its own binary" << std::endl;
    return 1;
  }
  std::string node_json = "/tmp/libra-bench-kv-" + std::to_string(getpid()) + ".json";

  nlohmann::json report;
  report["benchmark"] = "kv";
  report["keys"] = flags.keys;
  report["repeat"] = flags.repeat;
  report["servers"] = 1;
  report["workers"] = 1;
  const std::string binary(self, n);
  // One job of the benchmark's nodes; `env` says how they talk.
  auto run_job = [&](const std::string& name, std::map<std::string, std::string> env) {
    LocalJob job;
    job.command = {binary,
                   "bench",
                   "kv",
                   "--keys",
                   std::to_string(flags.keys),
                   "--repeat",
                   std::to_string(flags.repeat),
                   "--node-json",
                   node_json};
    job.env = std::move(env);
    int status = RunProcesses(LocalJobProcesses(job), 600);
    if (status != 0) return status;
    std::ifstream in(node_json);
    report[name] = nlohmann::json::parse(in);
    std::remove(node_json.c_str());
    return 0;
  };
  std::vector<std::string> runs = {"tcp", "ipc"};
  for (const char* transport : {"tcp", "ipc"}) {
    const bool ipc = std::string(transport) == "ipc";
    if (int status = run_job(transport, {{"DMLC_LOCAL", ipc ? "1" : "0"}})) {
      return status;
    }
  }
  for (const std::string& capacity : flags.switch_capacities) {
    const std::string name = "switch_" + capacity;
    std::optional<train::LocalSwitchd> switchd;
    train::LocalSwitchdOptions quiet;
    quiet.echo = false;
    try {
      switchd.emplace(binary, quiet);
    } catch (const std::exception& e) {
      std::cerr << "bench kv: cannot start the local switch: " << e.what() << "\n";
      return 1;
    }
    const int status =
        run_job(name, {{"DMLC_LOCAL", "0"},
                       {"LIBRA_SWITCH", switchd->data_address()},
                       {"LIBRA_SWITCH_CONTROL", switchd->control_address()},
                       {"LIBRA_CAPACITY", capacity},
                       {"LIBRA_SAMPLE_EPOCHS", "1"},
                       {"LIBRA_SHARED_CORES",
                        std::to_string(std::max(1u, std::thread::hardware_concurrency()))}});
    if (status != 0) return status;
    for (const char* op : {"push", "pull", "pushpull"}) {
      report[name][op]["ratio_to_tcp"] = report[name][op]["median_ms"].get<double>() /
                                         report["tcp"][op]["median_ms"].get<double>();
    }
    report[name]["capacity"] = capacity;
    runs.push_back(name);
  }

  std::cout << std::left << std::setw(14) << "run" << std::setw(10) << "op" << std::right
            << std::setw(12) << "median ms" << std::setw(12) << "MB/s" << std::setw(14)
            << "against tcp"
            << "\n";
  for (const std::string& run : runs) {
    for (const char* op : {"push", "pull", "pushpull"}) {
      const auto& r = report[run][op];
      std::cout << std::left << std::setw(14) << run << std::setw(10) << op << std::right
                << std::fixed << std::setprecision(1) << std::setw(12)
                << r["median_ms"].get<double>() << std::setw(12) << r["mb_per_s"].get<double>();
      if (r.contains("ratio_to_tcp")) {
        std::cout << std::setw(13) << std::setprecision(2) << r["ratio_to_tcp"].get<double>()
                  << "x";
      }
      std::cout << "\n";
    }
  }
  if (!flags.json_path.empty()) {
    std::ofstream(flags.json_path) << report.dump(2) << "\n";
    std::cout << "wrote " << flags.json_path << "\n";
  }
  return 0;
}

}  // namespace

void AddBenchKvCommand(CLI::App& bench, Runner& run) {
  auto flags = std::make_shared<BenchKvFlags>();
  CLI::App* sub = bench.add_subcommand(
      "kv", "Push/pull throughput of the parameter server (1 server, 1 worker, loopback)");
  sub->add_option("--keys", flags->keys, "keys per call")->check(CLI::Range(1ull, 1ull << 31));
  sub->add_option("--repeat", flags->repeat, "runs per operation (median)")
      ->check(CLI::Range(1, 100));
  sub->add_option("--json", flags->json_path, "write the report here");
  sub->add_option("--switch", flags->switch_capacities,
                  "also run through a local switchd with each hot-set capacity (auto, or a "
                  "number of switch cells, 0: the whole switch), e.g. --switch auto,0")
      ->delimiter(',')
      ->check([](const std::string& capacity) {
        try {
          train::CheckCapacity(capacity);
          return std::string();
        } catch (const std::invalid_argument&) {
          return "a capacity is 'auto' or a number of switch cells, not '" + capacity + "'";
        }
      });
  sub->add_option("--node-json", flags->node_json_path)->group("");  // internal
  sub->callback([&run, flags] { run = [flags] { return RunBenchKv(*flags); }; });
}

}  // namespace libra::tool
