#include "hotpath/node/hot_path_node.h"
#include "hotpath/node/node_report.h"

namespace libra::hotpath {

nlohmann::json NodeReport() { return ps::hotpath::HotPathNode::Get()->Report(); }

}  // namespace libra::hotpath
