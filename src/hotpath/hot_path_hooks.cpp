// The runtime's hooks (include/ps/internal/hot_path_hooks.h), implemented
// by this process's hot path node and its worker and server paths.
#include "ps/internal/hot_path_hooks.h"

#include "hotpath/node/hot_path_config.h"
#include "hotpath/node/hot_path_node.h"
#include "hotpath/server/server_path.h"
#include "hotpath/worker/worker_path.h"

namespace ps::hot_path_hooks {

using libra::hotpath::HotPathNode;

std::unique_ptr<WorkerHotPath> CreateWorker(WorkerHotPath::ServerOf server_of) {
  if (!HotPathNode::Get()->enabled()) return nullptr;
  return libra::hotpath::MakeWorkerPath(std::move(server_of));
}

std::unique_ptr<ServerHotPath> CreateServer(ServerHotPath::Handle handle) {
  if (!HotPathNode::Get()->enabled()) return nullptr;
  return libra::hotpath::MakeServerPath(std::move(handle));
}

void CheckSettings() { (void)libra::hotpath::Config(); }

void OnStart() { HotPathNode::Get()->Start(); }

void BeforeFinalBarrier() { HotPathNode::Get()->BeforeFinalBarrier(); }

void OnFinalize() { HotPathNode::Get()->Stop(); }

}  // namespace ps::hot_path_hooks
