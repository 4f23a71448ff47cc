// Gathers every node's own account of a job (role, rank, bytes sent and
// received, plus what the node adds) at one node, over the job's own
// connections, so that the report is complete in a multi-machine job too.
//
// Every node creates a NodeReporter right after ps::Start and keeps it until
// after ps::Finalize. The gathering node calls Gather() once the others have
// finished their work; a node answers once it has called SetDetails, so a
// request that arrives early simply waits.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <vector>

#include "ps/simple_app.h"

namespace libra::train {

class NodeReporter {
 public:
  using Details = std::function<nlohmann::json()>;

  NodeReporter();

  // What this node adds to its entry; called when the entry is asked for.
  void SetDetails(Details details);

  // This node's entry: {"role", "rank", "bytes_sent", "bytes_received",
  // "hot_path" (libra::hotpath::NodeReport), ...details}.
  nlohmann::json Describe();

  // The entries of every node (this one included): the scheduler, then the
  // servers, then the workers, each by rank.
  std::vector<nlohmann::json> Gather();

 private:
  static constexpr int kAppId = 0x4c42;  // any id other than the KV apps' 0

  std::unique_ptr<ps::SimpleApp> app_;
  std::mutex mu_;
  std::condition_variable details_set_;
  Details details_;
  std::vector<nlohmann::json> gathered_;
};

}  // namespace libra::train
