// Customers as workers, as in PS-lite's test_kv_app_multi_workers: each
// worker process runs CUSTOMERS threads, and each thread's customer calls
// Start(c) and so is a worker of its own (DMLC_NUM_WORKER counts customers,
// not processes). Every customer pushes its own keys and a set of keys shared
// by all, waits at a barrier of the workers, and checks what it pulls: its
// own keys hold what it pushed, the shared keys one push per worker.
// Usage: multi_worker_program CUSTOMERS. A failed check exits non-zero.
#include <cmath>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "ps/ps.h"

using namespace ps;

namespace {

const int kNumKeys = 1000;
const int kRepeat = 20;

void RunWorker(int customer_id, int customers) {
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
  Finalize(customer_id, true);
}

}  // namespace

int main(int argc, char** argv) {
  const int customers = argc > 1 ? std::atoi(argv[1]) : 2;
  CHECK_GT(customers, 0) << "usage: multi_worker_program CUSTOMERS";
  const char* role = std::getenv("DMLC_ROLE");
  if (role != nullptr && std::string(role) == "worker") {
    std::vector<std::thread> threads;
    for (int c = 0; c < customers; ++c) threads.emplace_back(RunWorker, c, customers);
    for (std::thread& t : threads) t.join();
    return 0;
  }
  Start(0);
  KVServer<float>* server = nullptr;
  if (IsServer()) {
    server = new KVServer<float>(0);
    server->set_request_handle(KVServerDefaultHandle<float>());
  }
  Finalize(0, true);
  delete server;
  return 0;
}
