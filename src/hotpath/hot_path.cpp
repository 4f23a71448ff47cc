#include "hotpath/hot_path.h"

#include "hotpath/node/hot_path_node.h"
#include "hotpath/server/server_path.h"
#include "hotpath/worker/worker_path.h"

namespace libra::hotpath {

nlohmann::json NodeReport() { return HotPathNode::Get()->Report(); }

void ResumeAtEpoch(uint32_t epoch) { ResumeWorkerAtEpoch(epoch); }

void WaitUntilHotApplied(uint32_t epoch) { WaitUntilServerApplied(epoch); }

}  // namespace libra::hotpath
