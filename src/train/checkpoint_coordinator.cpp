#include "train/checkpoint_coordinator.h"

#include <filesystem>
#include <iostream>
#include <sstream>

#include "hotpath/hot_path.h"
#include "ps/ps.h"
#include "train/checkpoint.h"

namespace libra::train {
namespace {

constexpr int kAppId = 0x4c43;  // NodeReporter has 0x4c42, the KV apps 0

enum Head : int { kList = 1, kLoad = 2, kSave = 3, kStart = 4 };

// A SimpleApp whose handles are in place before its customer exists, so a
// request that arrived early (parked by the van) never meets the default
// handle, which would answer it with an empty body.
class App : public ps::SimpleApp {
 public:
  App(int customer_id, const Handle& request, const Handle& response) : SimpleApp() {
    set_request_handle(request);
    set_response_handle(response);
    obj_ = new ps::Customer(kAppId, customer_id, [this](const ps::Message& m) { Process(m); });
  }
};

bool IsError(const std::string& body) { return body.rfind("ok", 0) != 0; }

}  // namespace

// As in PS-lite, a server's customer of an app has the app's id; a worker's
// has the id its requests carry (0 here).
CheckpointCoordinator::CheckpointCoordinator(const CheckpointSettings& settings,
                                             SyncOptimizerServer* store)
    : settings_(settings), store_(store) {
  app_ = std::make_unique<App>(
      ps::IsWorker() ? 0 : kAppId,
      [this](const ps::SimpleData& request, ps::SimpleApp* app) { OnRequest(request, app); },
      [this](const ps::SimpleData& response, ps::SimpleApp*) {
        std::lock_guard<std::mutex> lock(mu_);
        answers_.push_back({response.sender, response.body});
      });
}

CheckpointCoordinator::~CheckpointCoordinator() = default;

void CheckpointCoordinator::OnRequest(const ps::SimpleData& request, ps::SimpleApp* app) {
  std::string answer;
  try {
    if (request.head == kStart && ps::IsWorker()) {
      start_.set_value(std::stoull(request.body));
      answer = "ok";
    } else if (store_ == nullptr) {
      answer = "error: not a server";
    } else if (request.head == kList) {
      answer = ServerList();
    } else if (request.head == kLoad) {
      answer = ServerLoad(std::stoull(request.body));
    } else if (request.head == kSave) {
      answer = ServerSave(std::stoull(request.body));
    } else {
      answer = "error: unknown checkpoint request " + std::to_string(request.head);
    }
  } catch (const std::exception& e) {
    answer = std::string("error: ") + e.what();
  }
  if (IsError(answer)) {
    std::cerr << "libra train: " << (ps::IsServer() ? "server " : "worker ") << ps::MyRank() << ": "
              << answer << std::endl;
  }
  app->Response(request, answer);
}

std::string CheckpointCoordinator::ServerList() {
  std::ostringstream out;
  out << "ok";
  for (uint64_t it : ListCheckpoints(settings_.dir, static_cast<uint32_t>(ps::MyRank()))) {
    out << " " << it;
  }
  return out.str();
}

std::string CheckpointCoordinator::ServerLoad(uint64_t iteration) {
  const uint32_t rank = static_cast<uint32_t>(ps::MyRank());
  const std::string path =
      (std::filesystem::path(settings_.dir) / CheckpointFileName(rank, iteration)).string();
  const ShardCheckpoint c = ReadCheckpoint(path);
  if (c.server_rank != rank || c.iteration != iteration) {
    throw CheckpointError("checkpoint " + path + ": holds server " + std::to_string(c.server_rank) +
                          "'s iteration " + std::to_string(c.iteration) +
                          ", not what its name says");
  }
  if (c.job_signature != settings_.job_signature) {
    throw CheckpointError("checkpoint " + path +
                          ": written by a job with other settings (model, optimizer, seed, "
                          "workers, servers, batch or test fraction differ)");
  }
  try {
    store_->Restore(c);
  } catch (const std::exception& e) {
    throw CheckpointError("checkpoint " + path + ": " + e.what());
  }
  std::cout << "server " << rank << ": resumed from " << path << " (" << c.keys.size() << " keys)"
            << std::endl;
  return "ok";
}

std::string CheckpointCoordinator::ServerSave(uint64_t iteration) {
  // The hot keys of iteration i come through the switch as epoch i - 1 and
  // may be applied after worker 0's push returned; epoch i cannot be (it
  // needs worker 0's next push).
  if (iteration > 0) libra::hotpath::WaitUntilHotApplied(static_cast<uint32_t>(iteration - 1));
  ShardCheckpoint c = store_->Snapshot();
  // Worker 0 asks only between its pushes, so the round count must agree.
  if (c.iteration != iteration) {
    return "error: asked for a checkpoint of iteration " + std::to_string(iteration) +
           " but this server is at iteration " + std::to_string(c.iteration);
  }
  c.server_rank = static_cast<uint32_t>(ps::MyRank());
  c.job_signature = settings_.job_signature;
  WriteCheckpoint(settings_.dir, c);
  // The two newest: one of them is complete on every server whatever crashed.
  PruneCheckpoints(settings_.dir, c.server_rank, 2);
  return "ok";
}

std::vector<CheckpointCoordinator::Answer> CheckpointCoordinator::AskServers(
    int head, const std::string& body) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    answers_.clear();
  }
  app_->Wait(app_->Request(head, body, ps::kServerGroup));
  std::vector<Answer> answers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    answers.swap(answers_);
  }
  for (const Answer& a : answers) {
    if (IsError(a.body)) {
      throw CheckpointError("server " + std::to_string(ps::Postoffice::IDtoRank(a.sender)) + ": " +
                            a.body.substr(a.body.find(' ') + 1));
    }
  }
  return answers;
}

uint64_t CheckpointCoordinator::AgreeOnStart() {
  if (!settings_.resume) return 0;
  if (ps::MyRank() != 0) return start_.get_future().get();
  std::vector<std::vector<uint64_t>> per_server;
  for (const Answer& a : AskServers(kList, "")) {
    std::istringstream in(a.body.substr(2));
    std::vector<uint64_t> iterations;
    for (uint64_t it; in >> it;) iterations.push_back(it);
    per_server.push_back(std::move(iterations));
  }
  bool any = false;
  for (const auto& list : per_server) any |= !list.empty();
  uint64_t start = 0;
  if (!any) {
    std::cout << "no checkpoint in " << settings_.dir << ": starting from the beginning"
              << std::endl;
  } else {
    const std::optional<uint64_t> common = NewestCommonIteration(per_server);
    if (!common) {
      throw CheckpointError("no checkpoint iteration in " + settings_.dir +
                            " is held by every server (a server's files are missing)");
    }
    start = *common;
    AskServers(kLoad, std::to_string(start));
    std::cout << "resuming after iteration " << start << " from " << settings_.dir << std::endl;
  }
  std::vector<int> timestamps;
  for (int r = 1; r < ps::NumWorkers(); ++r) {
    timestamps.push_back(
        app_->Request(kStart, std::to_string(start), ps::Postoffice::WorkerRankToID(r)));
  }
  for (int ts : timestamps) app_->Wait(ts);
  return start;
}

void CheckpointCoordinator::AfterIteration(uint64_t done, uint64_t total) {
  if (settings_.dir.empty() || settings_.every == 0 || ps::MyRank() != 0) return;
  // The last iteration needs none: the job is over, and a resumed job needs
  // an iteration left to run (its final evaluation and report).
  if (done % settings_.every != 0 || done >= total) return;
  AskServers(kSave, std::to_string(done));
}

}  // namespace libra::train
