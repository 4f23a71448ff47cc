#include "train/node_reporter.h"

#include <algorithm>
#include <string>

#include "hotpath/hot_path.h"
#include "ps/ps.h"

namespace libra::train {
namespace {

constexpr int kDescribeHead = 1;

int RoleOrder(const std::string& role) {
  return role == "scheduler" ? 0 : role == "server" ? 1 : 2;
}

}  // namespace

// As in PS-lite, a server's or the scheduler's customer of an app has the
// app's id; a worker's has the id its requests carry (0 here).
NodeReporter::NodeReporter()
    : app_(std::make_unique<ps::SimpleApp>(kAppId, ps::IsWorker() ? 0 : kAppId)) {
  app_->set_request_handle([this](const ps::SimpleData& request, ps::SimpleApp* app) {
    app->Response(request, Describe().dump());
  });
  app_->set_response_handle([this](const ps::SimpleData& response, ps::SimpleApp*) {
    nlohmann::json entry = nlohmann::json::parse(response.body, nullptr, false);
    if (entry.is_discarded())
      entry = {{"error", "unreadable report from node " + std::to_string(response.sender)}};
    std::lock_guard<std::mutex> lock(mu_);
    gathered_.push_back(std::move(entry));
  });
}

void NodeReporter::SetDetails(Details details) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    details_ = std::move(details);
  }
  details_set_.notify_all();
}

nlohmann::json NodeReporter::Describe() {
  Details details;
  {
    std::unique_lock<std::mutex> lock(mu_);
    details_set_.wait(lock, [this] { return static_cast<bool>(details_); });
    details = details_;
  }
  nlohmann::json entry = details();
  entry["role"] = ps::IsScheduler() ? "scheduler" : ps::IsServer() ? "server" : "worker";
  entry["rank"] = ps::IsScheduler() ? 0 : ps::MyRank();
  ps::Van* van = ps::Postoffice::Get()->van();
  entry["bytes_sent"] = van->bytes_sent();
  entry["bytes_received"] = van->bytes_received();
  entry["hot_path"] = hotpath::NodeReport();
  return entry;
}

std::vector<nlohmann::json> NodeReporter::Gather() {
  const int me = ps::Postoffice::Get()->van()->my_node().id;
  std::vector<int> timestamps;
  std::vector<int> others{ps::kScheduler};
  for (int r = 0; r < ps::NumServers(); ++r) others.push_back(ps::Postoffice::ServerRankToID(r));
  for (int r = 0; r < ps::NumWorkers(); ++r) others.push_back(ps::Postoffice::WorkerRankToID(r));
  for (int id : others) {
    if (id != me) timestamps.push_back(app_->Request(kDescribeHead, "", id));
  }
  for (int ts : timestamps) app_->Wait(ts);
  std::vector<nlohmann::json> entries;
  {
    std::lock_guard<std::mutex> lock(mu_);
    entries = std::move(gathered_);
    gathered_.clear();
  }
  entries.push_back(Describe());
  std::sort(entries.begin(), entries.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    return std::make_pair(RoleOrder(a.value("role", "")), a.value("rank", 0)) <
           std::make_pair(RoleOrder(b.value("role", "")), b.value("rank", 0));
  });
  return entries;
}

}  // namespace libra::train
