// The PS-lite headers and calls beyond ps.h that PS-lite programs use, in a
// program built as C++11 (as PS-lite programs are) and run under
// `libra launch`: dmlc/logging.h and dmlc/base.h, ps/internal/utils.h
// (GetEnv), assign_op.h, parallel_sort.h, parallel_kv_match.h,
// threadsafe_pqueue.h, PS_VLOG, Postoffice::is_recovery() and errors caught
// as dmlc::Error. Every node checks them; the workers then push and pull,
// the server merging pushes with ParallelOrderedMatch. A failed check exits
// non-zero.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "dmlc/base.h"
#include "dmlc/logging.h"
#include "ps/internal/assign_op.h"
#include "ps/internal/parallel_kv_match.h"
#include "ps/internal/parallel_sort.h"
#include "ps/internal/threadsafe_pqueue.h"
#include "ps/internal/utils.h"
#include "ps/ps.h"

#if !DMLC_USE_CXX11
#error "DMLC_USE_CXX11 must be set"
#endif

using namespace ps;

namespace {

class NotCopyable {
 public:
  NotCopyable() {}

 private:
  DISALLOW_COPY_AND_ASSIGN(NotCopyable);
};

int evaluated = 0;
int Evaluate() { return ++evaluated; }

void CheckLoggingAndErrors() {
  dmlc::InitLogging("pslite_compat_program");
  // A failed check in this program, and one inside the library, both caught
  // as dmlc::Error; and as ps::Error, the same type.
  bool caught = false;
  try {
    CHECK_EQ(1, 2) << "on purpose";
  } catch (const dmlc::Error& e) {
    caught = std::string(e.what()).find("on purpose") != std::string::npos;
  }
  CHECK(caught) << "CHECK_EQ did not throw dmlc::Error";
  caught = false;
  try {
    Postoffice::Get()->GetNodeIDs(123457);  // no such node or group
  } catch (const dmlc::Error&) {
    caught = true;
  }
  CHECK(caught) << "the library's error is not a dmlc::Error";
  caught = false;
  try {
    LOG(FATAL) << "fatal";
  } catch (const ps::Error&) {
    caught = true;
  }
  CHECK(caught);
  caught = false;
  try {
    dmlc::LogMessageFatal(__FILE__, __LINE__).stream() << "fatal";
  } catch (const dmlc::Error&) {
    caught = true;
  }
  CHECK(caught);

  // PS_VLOG(v) builds its message only when PS_VERBOSE >= v (unset: 0).
  CHECK_EQ(Postoffice::Get()->verbose(), 0);
  PS_VLOG(1) << "not built " << Evaluate();
  CHECK_EQ(evaluated, 0) << "PS_VLOG(1) evaluated its message at PS_VERBOSE=0";
  PS_VLOG(0) << "built " << Evaluate();
  CHECK_EQ(evaluated, 1);
  LOG_IF(INFO, false) << Evaluate();
  CHECK_EQ(evaluated, 1);
  DCHECK_LE(1, 2);
  LG << "LG works";

  std::vector<int> empty, one(1, 5);
  CHECK(dmlc::BeginPtr(empty) == nullptr);
  CHECK_EQ(*dmlc::BeginPtr(one), 5);
  NotCopyable not_copyable;
  (void)not_copyable;
}

void CheckGetEnv() {
  CHECK_EQ(GetEnv("DMLC_NUM_WORKER", 0), NumWorkers());
  CHECK_EQ(GetEnv("LIBRA_COMPAT_UNSET", 7), 7);
  CHECK_EQ(GetEnv("DMLC_ROLE", std::string()), IsScheduler() ? "scheduler"
                                               : IsServer()  ? "server"
                                                             : "worker");
  CHECK_EQ(GetEnv("LIBRA_COMPAT_RATE", 0.0), 0.25);  // set by the test
  CHECK(!Postoffice::Get()->is_recovery());
}

void CheckAssignAndSort() {
  float f = 6;
  AssignFunc(2.0f, TIMES, &f);
  AssignFunc(3.0f, DIVIDE, &f);
  AssignFunc(1.0f, MINUS, &f);
  CHECK_EQ(f, 3.0f);
  int i = 6;
  AssignFuncInt(3, AND, &i);
  AssignFuncInt(8, OR, &i);
  AssignFuncInt(1, XOR, &i);
  CHECK_EQ(i, 11);
  bool caught = false;
  try {
    AssignFunc(1.0f, XOR, &f);  // a bit operator on a float
  } catch (const dmlc::Error&) {
    caught = true;
  }
  CHECK(caught);

  // Large enough to be cut into pieces sorted on several threads.
  std::mt19937_64 rng(7);
  SArray<Key> keys(100000);
  for (Key& k : keys) k = rng();
  std::vector<Key> expected(keys.begin(), keys.end());
  std::sort(expected.begin(), expected.end());
  ParallelSort(&keys, 4);
  CHECK(std::equal(keys.begin(), keys.end(), expected.begin()));
  ParallelSort(&keys, 3, [](Key a, Key b) { return a > b; });
  CHECK(std::equal(keys.begin(), keys.end(), expected.rbegin()));
}

void CheckOrderedMatch() {
  // src: keys 0, 2, 4, ... (two values each); dst: keys 0, 3, 6, ...
  SArray<Key> src_key, dst_key;
  SArray<float> src_val;
  for (Key k = 0; k < 3000; k += 2) {
    src_key.push_back(k);
    src_val.push_back(k);
    src_val.push_back(-static_cast<float>(k));
  }
  for (Key k = 0; k < 3000; k += 3) dst_key.push_back(k);
  std::vector<float> dst;  // grows and is filled with 0 first
  size_t matched = ParallelOrderedMatch(src_key, src_val, dst_key, &dst, 2, PLUS, 3);
  CHECK_EQ(matched, 500u);  // the multiples of 6
  CHECK_EQ(dst.size(), 2 * dst_key.size());
  for (size_t j = 0; j < dst_key.size(); ++j) {
    const float want = dst_key[j] % 2 == 0 ? static_cast<float>(dst_key[j]) : 0;
    CHECK_EQ(dst[2 * j], want);
    CHECK_EQ(dst[2 * j + 1], -want);
  }
  // Again into an SArray of the right size: unmatched values stay.
  SArray<float> kept(2 * dst_key.size(), 1.0f);
  CHECK_EQ(ParallelOrderedMatch(src_key, src_val, dst_key, &kept, 2, ASSIGN), 500u);
  CHECK_EQ(kept[2], 1.0f);  // key 3: unmatched
  CHECK_EQ(kept[4], 6.0f);  // key 6
  CHECK_EQ(kept[5], -6.0f);
}

void CheckPriorityQueue() {
  ThreadsafePQueue queue;
  const int priorities[] = {0, 5, 1, 5, -2};
  std::thread producer([&] {
    for (int t = 0; t < 5; ++t) {
      Message msg;
      msg.meta.priority = priorities[t];
      msg.meta.timestamp = t;
      queue.Push(msg);
    }
  });
  producer.join();
  // Highest priority first; equal priorities in the order pushed.
  const int order[] = {1, 3, 2, 0, 4};
  for (int t = 0; t < 5; ++t) {
    Message msg;
    queue.WaitAndPop(&msg);
    CHECK_EQ(msg.meta.timestamp, order[t]);
  }
}

// Sums pushes into a sorted store with ParallelOrderedMatch (keys are
// pushed in a fixed set, so the store holds them all from the start).
struct MatchingStore {
  SArray<Key> keys;
  SArray<float> vals;
  void operator()(const KVMeta& meta, const KVPairs<float>& data, KVServer<float>* server) {
    if (keys.empty()) {
      keys.CopyFrom(data.keys);
      vals.resize(keys.size(), 0);
    }
    if (meta.push) {
      CHECK_EQ(ParallelOrderedMatch(data.keys, data.vals, keys, &vals, 1, PLUS, 2),
               data.keys.size());
    }
    KVPairs<float> res;
    if (meta.pull) {
      res.keys = data.keys;
      CHECK_EQ(ParallelOrderedMatch(keys, vals, data.keys, &res.vals), data.keys.size());
    }
    server->Response(meta, res);
  }
};

}  // namespace

int main() {
  Start(0);
  CheckLoggingAndErrors();
  CheckGetEnv();
  CheckAssignAndSort();
  CheckOrderedMatch();
  CheckPriorityQueue();

  KVServer<float>* server = nullptr;
  if (IsServer()) {
    server = new KVServer<float>(0);
    server->set_request_handle(MatchingStore());
  }
  if (IsWorker()) {
    KVWorker<float> kv(0, 0);
    std::vector<Key> keys;
    for (int i = 0; i < 64; ++i) keys.push_back(kMaxKey / 64 * i + 1);
    std::vector<float> vals(keys.size(), 1.0f);
    kv.Wait(kv.Push(keys, vals));
    Postoffice::Get()->Barrier(0, kWorkerGroup);
    std::vector<float> pulled;
    kv.Wait(kv.Pull(keys, &pulled));
    for (float v : pulled) CHECK_EQ(v, static_cast<float>(NumWorkers()));
  }
  Finalize(0, true);
  delete server;
  return 0;
}
