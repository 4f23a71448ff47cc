#include "hotpath_node.h"
#include "libra/hotpath_runtime.h"

namespace libra::hotpath {

nlohmann::json NodeReport() { return ps::hotpath::HotPathNode::Get()->Report(); }

}  // namespace libra::hotpath
