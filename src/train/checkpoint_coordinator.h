// When the servers of a `libra train` job write their checkpoints, and which
// one a resumed job starts from, agreed over the job's own connections (a
// SimpleApp of its own app id), so it works across machines too.
//
// Consistency. Worker 0 drives it: after its push of iteration i returned
// (the BSP round i is applied on every server), and before it pushes
// iteration i+1, it asks every server to write a checkpoint of iteration i
// and waits for all of them. No server can apply round i+1 meanwhile, since
// round i+1 needs worker 0's push; the other workers' pushes for i+1 are
// only held. So every shard is written exactly at the boundary after i, and
// each server checks that its round count says i. With Libra's hot path the
// hot keys of iteration i arrive as the switch's epoch i - 1, possibly after
// worker 0's push returned (it waits for the switch's ACK, not for the
// servers): a server first waits until its hot path has applied that epoch
// (epoch i cannot be applied yet: it needs worker 0's next push). A resumed
// Libra job reads back the controller's INSTALL (hot set, owners, scale,
// first epoch) kept in the checkpoint directory and numbers its epochs from
// the resumed iteration, so both paths go on exactly as before.
//
// Resume. Worker 0 asks every server which checkpoints it has, picks the
// newest iteration all of them have (servers keep their last two, so a crash
// between two servers' writes still leaves one), has every server load it,
// then tells the other workers to start after it. A server answers "load"
// only with its shard in place, and no worker pushes before worker 0's word,
// so no push meets a half-restored shard.
#pragma once

#include <cstdint>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ps/simple_app.h"
#include "train/sync_optimizer_server.h"

namespace libra::train {

struct CheckpointSettings {
  std::string dir;             // "" : no checkpoints
  uint64_t every = 0;          // write after every this-many iterations (0: never)
  bool resume = false;         // start from the newest checkpoint every server has
  uint64_t job_signature = 0;  // a checkpoint of another job is refused
};

class CheckpointCoordinator {
 public:
  // Every server and worker of the job creates one right after ps::Start
  // and keeps it until after ps::Finalize. `store` is this server's shard
  // (nullptr on a worker).
  CheckpointCoordinator(const CheckpointSettings& settings, SyncOptimizerServer* store);
  ~CheckpointCoordinator();

  // Workers, before training. Worker 0 with resume: agrees with the servers
  // on the iteration, has them load it and tells the other workers; another
  // worker with resume: waits for worker 0's word. Returns the number of
  // iterations already done (0 without resume, or if no server has a
  // checkpoint). Throws CheckpointError when the servers' checkpoints cannot
  // be used (no common iteration, a damaged file, another job's file).
  uint64_t AgreeOnStart();

  // Worker 0, once iteration `done` (counted from the job's start) is
  // applied: if a checkpoint is due, every server writes it. Throws
  // CheckpointError with the failing server's reason.
  void AfterIteration(uint64_t done, uint64_t total);

 private:
  struct Answer {
    int sender;
    std::string body;
  };
  void OnRequest(const ps::SimpleData& request, ps::SimpleApp* app);
  std::string ServerList();
  std::string ServerLoad(uint64_t iteration);
  std::string ServerSave(uint64_t iteration);
  // Sends `head`/`body` to every server; returns their answers, throwing
  // CheckpointError for the first that reports an error.
  std::vector<Answer> AskServers(int head, const std::string& body);

  CheckpointSettings settings_;
  SyncOptimizerServer* store_;
  std::mutex mu_;
  std::vector<Answer> answers_;
  std::promise<uint64_t> start_;  // another worker: worker 0's word
  std::unique_ptr<ps::SimpleApp> app_;
};

}  // namespace libra::train
