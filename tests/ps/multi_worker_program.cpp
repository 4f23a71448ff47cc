// Customers as workers, as in PS-lite's test_kv_app_multi_workers: each
// worker process runs CUSTOMERS threads, and each thread's customer calls
// Start(c) and so is a worker of its own (DMLC_NUM_WORKER counts customers,
// not processes). Every customer pushes its own keys and a set of keys shared
// by all, waits at a barrier of the workers, and checks what it pulls: its
// own keys hold what it pushed, the shared keys one push per worker.
//
// With `hot` (and Libra's hot path on: LIBRA_SWITCH, LIBRA_SAMPLE_EPOCHS at
// most kRepeat, a hot set that holds every key of the sampling phase) each
// customer also checks, in its node's report, that its own worker carried
// every push from the first hot epoch on (its own keys hot, the shared ones
// cold), and each server that it applied every hot epoch. With `hot-dies`
// (the switch dies during the hot epochs and stays dead) each customer's
// worker and each server also fell back to the servers' sums exactly once.
// With `hot-restart` (the switch dies, and another is started in its place)
// each customer, after its first pushes, waits until the hot path has
// resumed, and its later pushes go through the new switch.
//
// The servers' handle is PS-lite's default, which answers a push that asks
// for values (PushPull), so each hot epoch's values come back with the
// switch's push; with `hot-pushonly` it is one that answers only pulls (as
// PS-lite's did before PushPull), and every epoch's values are pulled.
// Usage: multi_worker_program CUSTOMERS [hot|hot-dies|hot-restart|hot-pushonly].
// A failed check exits non-zero.
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "hotpath/hot_path.h"
#include "ps/ps.h"

using namespace ps;

namespace {

const int kNumKeys = 1000;
const int kRepeat = 20;
// Pushes per worker: kRepeat Push, the shared keys' Push, kRepeat PushPull.
const int kPushes = 2 * kRepeat + 1;

int SampleEpochs() {
  const char* v = std::getenv("LIBRA_SAMPLE_EPOCHS");
  return v ? std::atoi(v) : 20;
}

// This customer's worker in the node's report: the report itself when the
// process is one worker, else its entry in "customers", one per worker.
nlohmann::json OwnWorkerReport(int customer_id, int customers) {
  const nlohmann::json report = libra::hotpath::NodeReport();
  CHECK(report.value("active", false)) << "the hot path is not on: " << report.dump();
  if (customers == 1) return report;
  CHECK(report.contains("customers")) << report.dump();
  const nlohmann::json& list = report["customers"];
  CHECK_EQ(static_cast<int>(list.size()), customers) << report.dump();
  std::set<int> ranks;
  for (const nlohmann::json& entry : list) ranks.insert(entry.at("rank").get<int>());
  CHECK_EQ(static_cast<int>(ranks.size()), customers) << "ranks not distinct: " << report.dump();
  for (const nlohmann::json& entry : list) {
    if (entry.at("customer").get<int>() == customer_id) return entry;
  }
  LOG(FATAL) << "customer " << customer_id << " is not in the report: " << report.dump();
  return {};
}

// Every push from the first hot epoch K on went through this customer's own
// worker path: all its own keys' values hot (they are pushed by the first
// 2 * kRepeat pushes but the shared one), the shared keys (never pushed
// before K) cold; through its own sender, or (`switch_dies`) through its
// sender until the switch died, then to the servers after one fallback.
enum class SwitchFate { kLives, kDies, kRestarts };

// The request handle of PS-lite before PushPull: a request that pushes is
// answered without values, whether or not it also asks for them.
struct PushOnlyHandle {
  void operator()(const KVMeta& meta, const KVPairs<float>& data, KVServer<float>* server) {
    KVPairs<float> res;
    if (meta.push) {
      for (size_t i = 0; i < data.keys.size(); ++i) store[data.keys[i]] += data.vals[i];
    } else {
      res.keys = data.keys;
      for (Key key : data.keys) res.vals.push_back(store[key]);
    }
    server->Response(meta, res);
  }
  std::unordered_map<Key, float> store;
};

void CheckHotPath(int customer_id, int customers, SwitchFate fate) {
  const int hot_epochs = kPushes - SampleEpochs();
  const nlohmann::json mine = OwnWorkerReport(customer_id, customers);
  CHECK_EQ(mine.at("epochs_hot").get<int>(), hot_epochs) << mine.dump();
  CHECK_EQ(mine.at("hot_values_pushed").get<int>(), kNumKeys * (hot_epochs - 1)) << mine.dump();
  CHECK_EQ(mine.at("cold_values_pushed").get<int>(), kNumKeys) << mine.dump();
  CHECK_EQ(mine.at("fallback").at("fallbacks").get<int>(), fate == SwitchFate::kLives ? 0 : 1)
      << mine.dump();
  CHECK_EQ(mine.at("fallback").at("resumes").get<int>(), fate == SwitchFate::kRestarts ? 1 : 0)
      << mine.dump();
  if (fate == SwitchFate::kRestarts) {
    // The sender of the resumed hot path carried the pushes after the wait.
    CHECK_GE(mine.at("sender").at("epochs_acked").get<int>(), kRepeat) << mine.dump();
    return;
  }
  if (fate == SwitchFate::kDies) {
    CHECK_GT(mine.at("fallback").at("epochs_to_servers").get<int>(), 0) << mine.dump();
    return;
  }
  CHECK_EQ(mine.at("sender").at("epochs_acked").get<int>(), hot_epochs) << mine.dump();
  CHECK_GT(mine.at("sender").at("replica_values").get<int>(), 0) << mine.dump();
}

// Waits (at most 60 s) until this customer's worker path has been told to
// resume the hot path (the RESUME came; its next push goes to the new
// switch), or has resumed (the RESUME came while it still pushed).
void WaitForResume(int customer_id, int customers) {
  for (int waited_ms = 0;; waited_ms += 10) {
    const nlohmann::json mine = OwnWorkerReport(customer_id, customers);
    const nlohmann::json& fallback = mine.at("fallback");
    if (fallback.at("resume_pending").get<bool>() || fallback.at("resumes").get<int>() > 0) return;
    CHECK_LT(waited_ms, 60000) << "the hot path did not resume: " << mine.dump();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void RunWorker(int customer_id, int customers, bool hot, SwitchFate fate) {
  Start(customer_id);
  CHECK_EQ(NumWorkers() % customers, 0) << "DMLC_NUM_WORKER counts every customer";
  KVWorker<float> kv(0, customer_id);
  // Keys of this customer: distinct from every other customer's.
  const Key mine = static_cast<Key>(MyRank() * customers + customer_id) + 100;
  std::vector<Key> keys, shared;
  std::vector<float> vals;
  for (int i = 0; i < kNumKeys; ++i) {
    keys.push_back(kMaxKey / kNumKeys * i + mine);
    vals.push_back(static_cast<float>((i * 7 + customer_id) % 100));
    shared.push_back(kMaxKey / kNumKeys * i + 1);
  }
  std::vector<int> ts;
  for (int r = 0; r < kRepeat; ++r) ts.push_back(kv.Push(keys, vals));
  for (int t : ts) kv.Wait(t);
  kv.Wait(kv.Push(shared, std::vector<float>(shared.size(), 1.0f)));
  if (fate == SwitchFate::kRestarts) WaitForResume(customer_id, customers);

  std::vector<float> pulled;
  kv.Wait(kv.Pull(keys, &pulled));
  std::vector<float> outs;
  for (int r = 0; r < kRepeat; ++r) kv.Wait(kv.PushPull(keys, vals, &outs));
  for (int i = 0; i < kNumKeys; ++i) {
    CHECK_EQ(pulled[i], vals[i] * kRepeat) << "key " << keys[i];
    CHECK_EQ(outs[i], vals[i] * 2 * kRepeat) << "key " << keys[i];
  }

  // Every worker (every customer of every worker process) has pushed the
  // shared keys once it passed this barrier.
  Postoffice::Get()->Barrier(customer_id, kWorkerGroup);
  kv.Wait(kv.Pull(shared, &pulled));
  for (float v : pulled) CHECK_EQ(v, static_cast<float>(NumWorkers()));
  if (hot) CheckHotPath(customer_id, customers, fate);
  Finalize(customer_id, true);
}

}  // namespace

int main(int argc, char** argv) {
  const int customers = argc > 1 ? std::atoi(argv[1]) : 2;
  CHECK_GT(customers, 0) << "usage: multi_worker_program CUSTOMERS [hot|hot-dies|hot-restart]";
  const std::string mode = argc > 2 ? argv[2] : "";
  const SwitchFate fate = mode == "hot-dies"      ? SwitchFate::kDies
                          : mode == "hot-restart" ? SwitchFate::kRestarts
                                                  : SwitchFate::kLives;
  const bool push_only = mode == "hot-pushonly";
  const bool hot = mode == "hot" || push_only || fate != SwitchFate::kLives;
  const char* role = std::getenv("DMLC_ROLE");
  if (role != nullptr && std::string(role) == "worker") {
    std::vector<std::thread> threads;
    for (int c = 0; c < customers; ++c) threads.emplace_back(RunWorker, c, customers, hot, fate);
    for (std::thread& t : threads) t.join();
    return 0;
  }
  Start(0);
  KVServer<float>* server = nullptr;
  if (IsServer()) {
    server = new KVServer<float>(0);
    if (push_only) {
      server->set_request_handle(PushOnlyHandle());
    } else {
      server->set_request_handle(KVServerDefaultHandle<float>());
    }
  }
  Finalize(0, true);
  if (hot && server != nullptr) {
    // Every worker drained before the final barrier: the servers applied
    // every hot epoch, each the sum of all workers' pushes from the switch.
    const nlohmann::json report = libra::hotpath::NodeReport();
    CHECK_EQ(report.at("epochs_collected").get<int>(), kPushes - SampleEpochs()) << report.dump();
    CHECK_EQ(report.at("fallback").at("fallbacks").get<int>(), fate == SwitchFate::kLives ? 0 : 1)
        << report.dump();
    CHECK_EQ(report.at("fallback").at("resumes").get<int>(), fate == SwitchFate::kRestarts ? 1 : 0)
        << report.dump();
    if (fate == SwitchFate::kLives) {
      // The first hot epoch publishes every owned key (a pull); each later
      // one the values its push asked for, unless the handle answers only
      // pulls.
      const int epochs = kPushes - SampleEpochs();
      CHECK_EQ(report.at("values_with_push").get<int>(), push_only ? 0 : epochs - 1)
          << report.dump();
      CHECK_EQ(report.at("values_pulled").get<int>(), push_only ? epochs : 1) << report.dump();
      // Each epoch taken once, on the collector's thread or by the dispatcher.
      const nlohmann::json& taken = report.at("epochs_taken_by");
      CHECK_EQ(taken.at("collector").get<int>() + taken.at("dispatcher").get<int>(), epochs)
          << report.dump();
    }
  }
  delete server;
  return 0;
}
