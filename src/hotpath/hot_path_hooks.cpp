// The runtime's hooks (include/ps/internal/hot_path_hooks.h), implemented
// by this process's hot path node and its worker and server paths.
#include "ps/internal/hot_path_hooks.h"

#include "hotpath/node/hot_path_config.h"
#include "hotpath/node/hot_path_node.h"
#include "hotpath/server/server_path.h"
#include "hotpath/worker/worker_path.h"

namespace ps::hot_path_hooks {

using libra::hotpath::HotPathNode;

std::unique_ptr<WorkerHotPath> CreateWorker(int customer_id, WorkerHotPath::ServerOf server_of) {
  if (!HotPathNode::Get()->enabled()) return nullptr;
  // Customer 0 may be created before ps::Start (its worker id is looked up at
  // its first hot epoch); any other customer is a worker only if it
  // registered as one.
  if (customer_id != 0 && HotPathNode::WorkerIdOf(customer_id) == ps::Node::kEmpty) {
    return nullptr;
  }
  return libra::hotpath::MakeWorkerPath(customer_id, std::move(server_of));
}

std::unique_ptr<ServerHotPath> CreateServer(ServerHotPath::Handle handle) {
  if (!HotPathNode::Get()->enabled()) return nullptr;
  return libra::hotpath::MakeServerPath(std::move(handle));
}

void CheckSettings() { (void)libra::hotpath::Config(); }

void OnStart() { HotPathNode::Get()->Start(); }

void BeforeFinalBarrier(int customer_id) { HotPathNode::Get()->BeforeFinalBarrier(customer_id); }

void OnFinalize() { HotPathNode::Get()->Stop(); }

}  // namespace ps::hot_path_hooks
