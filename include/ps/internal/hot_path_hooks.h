// The hooks through which the runtime reaches Libra's hot path. Not part of
// the PS-lite API. This header is all that src/ps and the KV apps know of the
// hot path; src/hotpath/hot_path_hooks.cpp implements it (libra_hotpath).
//
// The hot path is on when LIBRA_SWITCH is set (docs/hotpath.md); otherwise
// the Create functions return nullptr and the others do nothing, and the
// runtime behaves as PS-lite does.
//
// Epochs: every Push/PushPull of a worker's float KVWorker of app 0 is one
// epoch (the e-th push of every worker is epoch e). A worker is customer 0 of
// a worker process, or each customer that registered as a worker of its own
// (customers as workers, van.h), each with its own hot path.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "ps/base.h"
#include "ps/sarray.h"

namespace ps {

// A worker's hot path, as KVWorker<float> uses it (app 0). Before
// the first hot epoch the worker counts the keys it pushes (sampling); from
// then on it splits each push: hot keys go to the switch, the rest stays a
// PS-lite request. Completions of the hot part run in order on one thread.
class WorkerHotPath {
 public:
  struct Parts {
    SArray<Key> keys;
    SArray<float> vals;
    SArray<int> lens;  // as pushed (empty: one value per key)
  };
  using PartDone = std::function<void(Parts hot)>;
  // The server rank the application's slicer sends each of `keys` (sorted,
  // distinct) to.
  using ServerOf = std::function<std::vector<uint32_t>(const SArray<Key>& keys)>;

  virtual ~WorkerHotPath() = default;

  // One epoch's push: `all` is what the application pushed. Fills *cold with
  // what goes to the servers; returns true when a hot part is on its way,
  // and then `done` runs once it has completed, with the hot keys' new
  // values when `pull_back` (PushPull).
  virtual bool Push(const Parts& all, bool pull_back, Parts* cold, PartDone done) = 0;
  // A pull: fills *cold_keys with the keys to ask the servers for; returns
  // true when some keys are hot, and then `done` runs with their values.
  virtual bool Pull(const SArray<Key>& keys, SArray<Key>* cold_keys, PartDone done) = 0;
};

// A server's hot path, as KVServer<float> uses it (app 0). Each epoch's sums
// of the hot keys this server owns go to the application's request handle
// as one push (KVMeta from_switch, num_merged = N); then the keys' new values
// are read through the handle with a pull and published to the workers. The
// handle's Response to these two requests comes back through OnResponse.
class ServerHotPath {
 public:
  struct Request {
    bool push = false;  // vals are the sums to apply
    bool pull = false;  // answer with the keys' values (after the push, when both)
    int timestamp = 0;
    int num_merged = 1;
    SArray<Key> keys;
    SArray<float> vals;
    SArray<int> lens;
  };
  // Runs the application's request handle (KVServer::HandleRequest).
  using Handle = std::function<void(const Request&)>;

  virtual ~ServerHotPath() = default;

  // The handle answered the request `timestamp` (vals: a pull's values).
  virtual void OnResponse(int timestamp, const SArray<float>& vals) = 0;
};

namespace hot_path_hooks {

// nullptr unless the hot path is configured. A worker's: nullptr also for a
// customer other than 0 that is no worker of its own (it did not register).
std::unique_ptr<WorkerHotPath> CreateWorker(int customer_id, WorkerHotPath::ServerOf server_of);
std::unique_ptr<ServerHotPath> CreateServer(ServerHotPath::Handle handle);

// ps::Start, before the node registers: reads the LIBRA_* settings, so that
// a bad one stops this node (LOG(FATAL) throws ps::Error) before the job
// waits for it.
void CheckSettings();
// Postoffice::Start, once the van runs: the node joins the hot path's control.
void OnStart();
// Postoffice::Finalize(customer_id), before the final barrier: the worker of
// that customer waits until the servers applied all it pushed.
void BeforeFinalBarrier(int customer_id);
// Postoffice::Finalize, after the final barrier, before the van stops.
void OnFinalize();

}  // namespace hot_path_hooks
}  // namespace ps
