// The classic shape of a PS-lite program: the server object is created
// before Start(), Start()/Finalize() take no arguments, KVWorker(app_id) and
// SimpleApp(app_id) use their one-argument constructors, and the scheduler
// broadcasts SimpleApp requests to every node including itself. Checks fail
// the process (CHECK throws); workers print "PASS classic".
#include <atomic>
#include <iostream>

#include "ps/ps.h"

using namespace ps;

namespace {
std::atomic<int> requests_seen{0};
}  // namespace

int main() {
  KVServer<float>* server = nullptr;
  if (IsServer()) {  // the role is known before Start
    server = new KVServer<float>(0);
    server->set_request_handle(KVServerDefaultHandle<float>());
    RegisterExitCallback([server] { delete server; });
  }
  SimpleApp app(1);
  app.set_request_handle([](const SimpleData& req, SimpleApp* a) {
    CHECK_EQ(req.body, "hello");
    ++requests_seen;
    a->Response(req);
  });

  Start();
  const int broadcasts = 20;
  if (IsScheduler()) {
    std::vector<int> ts;
    for (int i = 0; i < broadcasts; ++i) {
      ts.push_back(app.Request(1, "hello", kScheduler + kServerGroup + kWorkerGroup));
    }
    for (int t : ts) app.Wait(t);
  }
  if (IsWorker()) {
    KVWorker<float> kv(0);
    std::vector<Key> keys;
    std::vector<float> vals;
    for (int i = 0; i < 16; ++i) {
      keys.push_back(kMaxKey / 16 * i + MyRank());
      vals.push_back(static_cast<float>(i + 1));
    }
    for (int r = 0; r < 10; ++r) kv.Wait(kv.Push(keys, vals));
    Postoffice::Get()->Barrier(0, kWorkerGroup);
    std::vector<float> out;
    kv.Wait(kv.Pull(keys, &out));
    for (size_t i = 0; i < keys.size(); ++i) {
      // Keys differ per rank, so each holds only this worker's 10 pushes.
      CHECK_EQ(out[i], vals[i] * 10) << "key " << keys[i];
    }
  }
  Finalize();
  CHECK_EQ(requests_seen.load(), broadcasts) << "SimpleApp broadcasts seen by this node";
  if (IsWorker()) std::cout << "PASS classic" << std::endl;
  return 0;
}
