// Libra's hot path on a server, as KVServer<float> uses it (app 0). Not part
// of the PS-lite API.
//
// Once the controller's INSTALL is in, a HotCollector reads the switch's sums
// of the hot keys this server owns (its key range), epoch after epoch. Each
// epoch goes to the application's request handle as one push (KVMeta
// from_switch, num_merged = N); then the keys' new values are read through
// the handle with a pull and sent to the switch, which replicates them to
// every worker. The handle's Response to these two requests comes back here.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "ps/base.h"
#include "ps/sarray.h"

namespace ps {
struct KVMeta;
}

namespace ps::hotpath {

class ServerPath {
 public:
  struct Request {
    bool push = false;
    int timestamp = 0;
    int num_merged = 1;
    SArray<Key> keys;
    SArray<float> vals;
    SArray<int> lens;
  };
  // Runs the application's request handle (KVServer::HandleRequest).
  using Handle = std::function<void(const Request&)>;

  // nullptr unless the hot path is configured (LIBRA_SWITCH).
  static std::unique_ptr<ServerPath> Create(Handle handle);
  virtual ~ServerPath() = default;

  // The handle answered the request `timestamp` (vals: a pull's values).
  virtual void OnResponse(int timestamp, const SArray<float>& vals) = 0;
};

// Blocks until this server's hot path has applied epoch `epoch` to the
// request handle: at once when there is no hot path here, it owns no hot
// keys, or it starts after `epoch`. A checkpoint of iteration i waits for
// epoch i - 1 (one push per iteration), so that it holds both paths' updates.
void WaitUntilHotApplied(uint32_t epoch);

}  // namespace ps::hotpath
