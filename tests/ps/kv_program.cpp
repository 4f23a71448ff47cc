// A PS-lite-style program that exercises the API; the multi-process tests run
// it under `libra launch` with one mode per test. Every check that fails
// exits non-zero; each worker prints "PASS <mode>" when its checks held.
//
// Written only against the public PS-lite API (#include "ps/ps.h"), the way
// an existing PS-lite application is.
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <map>
#include <random>
#include <thread>

#include "ps/ps.h"

using namespace ps;

namespace {

// Keys that hit every server boundary, its neighbours and random points.
std::vector<Key> TestKeys(int seed, int num_random) {
  std::vector<Key> keys;
  for (const Range& r : Postoffice::Get()->GetServerKeyRanges()) {
    keys.push_back(r.begin());
    keys.push_back(r.begin() + 1);
    if (r.begin() > 0) keys.push_back(r.begin() - 1);
    keys.push_back(r.end() - 1);
  }
  std::mt19937_64 rng(seed);
  for (int i = 0; i < num_random; ++i) keys.push_back(rng() % kMaxKey);
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

float ValueOf(Key key) { return static_cast<float>(key % 7 + 1); }

// Server handle storing any number of values per key (sums pushes).
struct VarLenStore {
  void operator()(const KVMeta& meta, const KVPairs<float>& data, KVServer<float>* server) {
    size_t n = data.keys.size();
    size_t offset = 0;
    KVPairs<float> res;
    for (size_t i = 0; i < n; ++i) {
      size_t len = data.lens.empty() ? (n ? data.vals.size() / n : 0) : data.lens[i];
      std::vector<float>& stored = store[data.keys[i]];
      if (meta.push) {
        if (stored.empty()) stored.assign(len, 0.0f);
        CHECK_EQ(stored.size(), len) << "key " << data.keys[i] << " changed its length";
        for (size_t j = 0; j < len; ++j) stored[j] += data.vals[offset + j];
        offset += len;
      }
      if (meta.pull) {
        res.keys.push_back(data.keys[i]);
        res.lens.push_back(static_cast<int>(stored.size()));
        for (float v : stored) res.vals.push_back(v);
      }
    }
    server->Response(meta, res);
  }
  std::unordered_map<Key, std::vector<float>> store;
};

void Expect(bool ok, const std::string& what) {
  if (!ok) {
    std::cerr << "FAIL: " << what << std::endl;
    std::exit(3);
  }
}

void WorkerBarrier() { Postoffice::Get()->Barrier(0, kWorkerGroup); }

void PullAndCheck(KVWorker<float>& kv, const std::vector<Key>& keys, float per_key_factor) {
  std::vector<float> vals;
  kv.Wait(kv.Pull(keys, &vals));
  Expect(vals.size() == keys.size(), "pull returned " + std::to_string(vals.size()) + " values");
  for (size_t i = 0; i < keys.size(); ++i) {
    float want = ValueOf(keys[i]) * per_key_factor;
    if (vals[i] != want) {
      Expect(false, "key " + std::to_string(keys[i]) + ": got " + std::to_string(vals[i]) +
                        " want " + std::to_string(want));
    }
  }
}

std::vector<float> ValuesFor(const std::vector<Key>& keys) {
  std::vector<float> vals;
  for (Key k : keys) vals.push_back(ValueOf(k));
  return vals;
}

void RunSum(KVWorker<float>& kv) {
  auto keys = TestKeys(1, 1000);
  auto vals = ValuesFor(keys);
  const int repeat = 5;
  for (int i = 0; i < repeat; ++i) kv.Wait(kv.Push(keys, vals));
  WorkerBarrier();
  PullAndCheck(kv, keys, static_cast<float>(repeat * NumWorkers()));
}

// Pulls and never pushes (an evaluating worker): every value is the
// default handle's zero. With a hot-set file the worker joins at this pull
// and must not keep the job from ending for want of a first push.
void RunPullOnly(KVWorker<float>& kv) {
  const auto keys = TestKeys(7, 100);
  std::vector<float> vals;
  kv.Wait(kv.Pull(keys, &vals));
  Expect(vals.size() == keys.size(), "pull returned " + std::to_string(vals.size()) + " values");
  for (float v : vals) Expect(v == 0.0f, "a value nobody pushed is " + std::to_string(v));
}

// Worker r pushes 1 to keys 0 and 1, 3 + r times, each push followed by a
// pull: a program whose workers push unequally often (uneven shards), as
// PS-lite runs them. Prints what its last pull saw ("uneven: worker r saw
// V"): with the hot path, every push of the epochs up to it, since each
// epoch completes once every worker (or its empty padding) is in.
void RunUneven(KVWorker<float>& kv) {
  const std::vector<Key> keys = {0, 1};
  const std::vector<float> vals = {1.0f, 1.0f};
  std::vector<float> out;
  for (int i = 0; i < 3 + MyRank(); ++i) {
    kv.Wait(kv.Push(keys, vals));
    kv.Wait(kv.Pull(keys, &out));
  }
  Expect(out.size() == 2 && out[0] == out[1], "keys 0 and 1 differ");
  Expect(out[0] >= static_cast<float>(3 + MyRank()), "a pull missed this worker's own pushes");
  std::cout << "uneven: worker " << MyRank() << " saw " << out[0] << std::endl;
}

// Every worker but the last pushes and pulls keys 0 and 1 four times; the
// last makes no KVWorker. Each sees the others' pushes and its own.
void RunIdle(KVWorker<float>& kv) {
  const std::vector<Key> keys = {0, 1};
  const std::vector<float> vals = {1.0f, 1.0f};
  std::vector<float> out;
  for (int i = 0; i < 4; ++i) {
    kv.Wait(kv.Push(keys, vals));
    kv.Wait(kv.Pull(keys, &out));
  }
  Expect(out.size() == 2 && out[0] == out[1], "keys 0 and 1 differ");
  Expect(out[0] >= 4.0f, "a pull missed this worker's own pushes");
  std::cout << "idle: worker " << MyRank() << " saw " << out[0] << std::endl;
}

// Keys 0 and 1, pushed and pulled four times; worker 0's third push is
// `third` instead of ones (NaN and infinity, or values far beyond the
// switch's fixed point). Each worker's last pull shows the sums.
void RunLargeOrNonFinite(KVWorker<float>& kv, const std::string& mode,
                         const std::vector<float>& third) {
  const std::vector<Key> keys = {0, 1};
  std::vector<float> out;
  for (int i = 0; i < 4; ++i) {
    std::vector<float> vals = {1.0f, 1.0f};
    if (i == 2 && MyRank() == 0) vals = third;
    kv.Wait(kv.Push(keys, vals));
    kv.Wait(kv.Pull(keys, &out));
    Expect(out.size() == 2, "pull returned " + std::to_string(out.size()) + " values");
  }
  std::cout << mode << ": worker " << MyRank() << " saw " << out[0] << " " << out[1] << std::endl;
}

void RunMany(KVWorker<float>& kv) {
  auto keys = TestKeys(2, 200);
  SArray<Key> skeys(keys);
  SArray<float> svals(ValuesFor(keys));
  const int outstanding = 200;
  std::vector<int> timestamps;
  for (int i = 0; i < outstanding; ++i) timestamps.push_back(kv.ZPush(skeys, svals));
  for (int ts : timestamps) kv.Wait(ts);
  WorkerBarrier();
  PullAndCheck(kv, keys, static_cast<float>(outstanding * NumWorkers()));
}

void RunPushPull(KVWorker<float>& kv) {
  auto keys = TestKeys(3, 300);
  auto vals = ValuesFor(keys);
  std::vector<float> outs;
  // Two rounds (Libra's sampling phase takes the first push).
  for (int round = 1; round <= 2; ++round) {
    outs.clear();
    kv.Wait(kv.PushPull(keys, vals, &outs));
    for (size_t i = 0; i < keys.size(); ++i) {
      // Our own pushes are in; others' (of either round) may or may not be yet.
      Expect(outs[i] >= vals[i] * round && outs[i] <= vals[i] * 2 * NumWorkers(),
             "pushpull result range: key " + std::to_string(keys[i]) + " round " +
                 std::to_string(round) + " got " + std::to_string(outs[i]) + " pushed " +
                 std::to_string(vals[i]));
    }
  }
  WorkerBarrier();
  PullAndCheck(kv, keys, static_cast<float>(2 * NumWorkers()));
}

void RunZeroCopy(KVWorker<float>& kv) {
  auto keys = TestKeys(4, 500);
  SArray<Key> skeys(keys);
  SArray<float> svals(ValuesFor(keys));
  SArray<float> outs;
  kv.Wait(kv.ZPushPull(skeys, svals, &outs));
  kv.Wait(kv.ZPush(skeys, svals));
  WorkerBarrier();
  SArray<float> pulled;  // empty: the received array is handed over
  kv.Wait(kv.ZPull(skeys, &pulled));
  Expect(pulled.size() == keys.size(), "zpull size");
  for (size_t i = 0; i < keys.size(); ++i) {
    Expect(pulled[i] == svals[i] * 2 * NumWorkers(), "zpull value");
  }
}

void RunLens(KVWorker<float>& kv) {
  auto keys = TestKeys(5, 300);
  std::vector<int> lens;
  std::vector<float> vals;
  for (Key k : keys) {
    int len = static_cast<int>(k % 4);  // 0..3 values, zero-length keys included
    lens.push_back(len);
    for (int j = 0; j < len; ++j) vals.push_back(ValueOf(k) + j);
  }
  kv.Wait(kv.Push(keys, vals, lens));
  kv.Wait(kv.Push(keys, vals, lens));
  WorkerBarrier();
  std::vector<float> out;
  std::vector<int> out_lens;
  kv.Wait(kv.Pull(keys, &out, &out_lens));
  Expect(out_lens == lens, "pulled lengths differ from pushed lengths");
  Expect(out.size() == vals.size(), "pulled value count");
  for (size_t i = 0; i < vals.size(); ++i) {
    Expect(out[i] == vals[i] * 2 * NumWorkers(), "variable-length value");
  }
}

void RunCallback(KVWorker<float>& kv) {
  auto keys = TestKeys(6, 100);
  auto vals = ValuesFor(keys);
  std::atomic<int> done{0};
  std::vector<int> ts;
  for (int i = 0; i < 10; ++i) ts.push_back(kv.Push(keys, vals, {}, 0, [&done] { ++done; }));
  for (int t : ts) kv.Wait(t);
  Expect(done == 10, "push callbacks ran " + std::to_string(done.load()) + " times");
  WorkerBarrier();
  std::vector<float> out;
  bool in_place = false;
  kv.Wait(kv.Pull(keys, &out, nullptr, 0, [&] {
    in_place = out.size() == keys.size() && out[0] == vals[0] * 10 * NumWorkers();
  }));
  Expect(in_place, "pull callback ran before values were in place");
  // A request with no keys completes at once and still runs its callback.
  bool empty_done = false;
  kv.Wait(kv.Push({}, {}, {}, 0, [&] { empty_done = true; }));
  Expect(empty_done, "empty push callback");
}

void RunSlicer(KVWorker<float>& kv) {
  // Everything to server 0, whatever the key.
  kv.set_slicer([](const KVPairs<float>& send, const std::vector<Range>& ranges,
                   KVWorker<float>::SlicedKVs* sliced) {
    sliced->assign(ranges.size(), {false, KVPairs<float>()});
    (*sliced)[0] = {true, send};
  });
  auto keys = TestKeys(7, 100);
  kv.Wait(kv.Push(keys, ValuesFor(keys)));
  kv.Wait(kv.Push(keys, ValuesFor(keys)));
  WorkerBarrier();
  PullAndCheck(kv, keys, static_cast<float>(2 * NumWorkers()));
}

void RunMultiCustomer() {
  // Two customers of app 0 in one process, each on its own thread.
  std::vector<std::thread> threads;
  for (int c = 0; c < 2; ++c) {
    threads.emplace_back([c] {
      KVWorker<float> kv(0, c + 1);
      auto keys = TestKeys(100 + c, 200);
      for (int i = 0; i < 3; ++i) kv.Wait(kv.Push(keys, ValuesFor(keys)));
    });
  }
  for (auto& t : threads) t.join();
  WorkerBarrier();
  KVWorker<float> kv(0, 3);
  for (int c = 0; c < 2; ++c) {
    auto keys = TestKeys(100 + c, 200);
    std::vector<float> vals;
    kv.Wait(kv.Pull(keys, &vals));
    // Keys of both customers may overlap at the range boundaries.
    for (size_t i = 0; i < keys.size(); ++i) {
      Expect(vals[i] >= ValueOf(keys[i]) * 3 * NumWorkers(), "multi-customer sum");
    }
  }
}

void RunSimpleApp() {
  SimpleApp app(1, 0);
  std::atomic<int> responses{0};
  app.set_response_handle([&](const SimpleData& res, SimpleApp*) {
    if (res.body == "pong " + std::to_string(res.sender)) ++responses;
  });
  app.Wait(app.Request(7, "ping", kServerGroup + kScheduler));
  Expect(responses == NumServers() + 1,
         "SimpleApp got " + std::to_string(responses.load()) + " correct responses");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: kv_program MODE" << std::endl;
    return 2;
  }
  std::string mode = argv[1];
  const char* role = std::getenv("DMLC_ROLE");
  bool is_worker = role && std::string(role) == "worker";

  // Servers and the scheduler answer SimpleApp pings with their node id. The
  // app exists before Start so that no ping meets the default handle.
  std::unique_ptr<SimpleApp> pinger;
  if (mode == "simple_app" && !is_worker) {
    // On servers and the scheduler a customer id equals its app id (as in PS-lite).
    pinger = std::make_unique<SimpleApp>(1, 1);
    pinger->set_request_handle([](const SimpleData& req, SimpleApp* app) {
      CHECK_EQ(req.head, 7);
      app->Response(req, "pong " + std::to_string(Postoffice::Get()->van()->my_node().id));
    });
  }
  Start(0);

  std::unique_ptr<KVServer<float>> server;
  if (IsServer()) {
    // Created after Start on purpose: requests that arrive earlier must wait.
    server = std::make_unique<KVServer<float>>(0);
    if (mode == "sum" || mode == "pullonly") {
      server->set_request_handle(KVServerDefaultHandle<float>());
    } else {
      server->set_request_handle(VarLenStore());
    }
  }
  if (IsWorker()) {
    if (mode == "multi_customer") {
      RunMultiCustomer();
    } else if (mode == "simple_app") {
      RunSimpleApp();
    } else if (mode == "twice") {
      // Two KVWorkers one after the other, each as in idle.
      for (int round = 0; round < 2; ++round) {
        KVWorker<float> kv(0, 0);
        RunIdle(kv);
      }
    } else if (mode == "idle" && MyRank() == NumWorkers() - 1) {
      // This worker makes no KVWorker: it only starts and finalizes.
    } else {
      KVWorker<float> kv(0, 0);
      if (mode == "sum")
        RunSum(kv);
      else if (mode == "many")
        RunMany(kv);
      else if (mode == "pullonly")
        RunPullOnly(kv);
      else if (mode == "uneven")
        RunUneven(kv);
      else if (mode == "idle")
        RunIdle(kv);
      else if (mode == "nonfinite")
        RunLargeOrNonFinite(
            kv, mode,
            {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()});
      else if (mode == "large")
        RunLargeOrNonFinite(kv, mode, {1e30f, -3e12f});
      else if (mode == "pushpull")
        RunPushPull(kv);
      else if (mode == "zerocopy")
        RunZeroCopy(kv);
      else if (mode == "lens")
        RunLens(kv);
      else if (mode == "callback")
        RunCallback(kv);
      else if (mode == "slicer")
        RunSlicer(kv);
      else if (mode == "hang") {
        std::cout << "READY" << std::endl;
        sleep(120);
      } else {
        std::cerr << "unknown mode " << mode << std::endl;
        return 2;
      }
    }
    std::cout << "PASS " << mode << std::endl;
  }
  Finalize(0, true);
  return 0;
}
