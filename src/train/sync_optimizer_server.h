// The servers' request handle for synchronous (BSP) training: per-key
// parameters and optimizer state (SGD, Adagrad, FTRL), updated once per
// iteration from the merged gradients of all N workers.
//
// BSP without blocking the server thread: the response to each push of an
// iteration is held back until every worker's push for it is in; then the
// gradients are merged in worker-rank order (BspRound), the optimizer steps
// once per key, and all held pushes are answered. A worker's Wait(push)
// returning therefore means the update is applied, so its next Pull sees it,
// and no worker can run ahead. Pulls are answered at once from the current
// parameters. A push of N workers' sum (KVMeta::num_merged = N) counts as N
// contributions.
//
// With Libra's hot path on, an iteration reaches a server by two paths that
// carry disjoint keys: the hot keys as one push from the switch
// (KVMeta::from_switch, num_merged = N, the pushed hot keys it owns) and
// the cold keys as the N workers' own pushes. Each path keeps its own rounds,
// so neither waits for the other: the switch's push completes its round at
// once and is applied and answered, the workers' pushes as above. The switch
// returns only the hot keys some worker pushed this epoch; a key whose sum
// is exactly 0 is skipped too (as it always was when the switch returned
// every key), so the optimizer steps the keys the plain parameter server
// would step, less those whose gradients cancel exactly.
//
// With several servers every worker pushes to every server each iteration,
// with an empty request where it has no keys there (see every_server_slicer.h),
// because a server completes an iteration by counting pushes.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>

#include "ps/kv_app.h"
#include "train/bsp_round.h"
#include "train/checkpoint.h"
#include "train/model.h"
#include "train/optimizer.h"
#include "train/parameter_table.h"

namespace libra::train {

struct SyncServerStats {
  uint64_t rounds = 0;            // iterations applied from the workers' own pushes
  uint64_t pushes = 0;            // worker push requests taken (one per worker per round)
  uint64_t pulls = 0;             // pull requests answered (the switch path's included)
  uint64_t keys_updated = 0;      // optimizer steps, one per key per round, both paths
  uint64_t malformed_pushes = 0;  // wrong value count: counted, gradient ignored
  uint64_t deferred_pushes = 0;   // arrived while their sender's previous round was open
  size_t parameters = 0;          // keys held
  // Libra's hot path: the switch's aggregated pushes.
  uint64_t switch_rounds = 0;          // one per epoch on the hot path
  uint64_t switch_keys_updated = 0;    // hot keys some worker pushed
  uint64_t switch_keys_untouched = 0;  // hot keys with an all-zero sum: skipped
};

class SyncOptimizerServer {
 public:
  // Sends the response to one request (KVServer::Response in a real server).
  using Respond = std::function<void(const ps::KVMeta&, const ps::KVPairs<float>&)>;

  SyncOptimizerServer(const ModelConfig& model, const OptimizerConfig& optimizer,
                      uint32_t num_workers);

  // The request handle. Thread-safe (the runtime calls it from one thread,
  // Libra's hot path from another).
  void Handle(const ps::KVMeta& meta, const ps::KVPairs<float>& data, const Respond& respond);

  // Installs Handle as `server`'s request handle; `this` must outlive it.
  void Serve(ps::KVServer<float>* server);

  // Called after each round of the workers' own pushes is applied, before
  // they are answered (for per-iteration traffic figures). It runs under the
  // handle's lock, so it must not call back into this object.
  void set_on_worker_round(std::function<void()> observer);

  SyncServerStats stats() const;
  uint64_t Fingerprint() const;

  // Checkpoints (see checkpoint.h). The BSP iteration the workers' path has
  // reached: its rounds applied since this server started, plus the
  // iteration of the checkpoint it was restored from.
  uint64_t iteration() const;
  // The shard as it is now: every key's values and optimizer state, and
  // iteration(). The caller fills in server_rank and job_signature.
  ShardCheckpoint Snapshot() const;
  // Replaces the shard by `checkpoint`, whose layout (value length, optimizer
  // kind and state) must be this server's; throws std::invalid_argument
  // otherwise, and std::logic_error once a push has been taken.
  void Restore(const ShardCheckpoint& checkpoint);
  uint32_t value_length() const { return model_->value_length(); }

 private:
  struct HeldRequest {
    ps::KVMeta meta;
    ps::KVPairs<float> data;
    Respond respond;
  };

  // The rounds of one path: the workers' own pushes, or the switch's.
  struct Path {
    Path(uint32_t num_workers, uint32_t value_length) : round(num_workers, value_length) {}
    BspRound round;
    std::vector<HeldRequest> held;       // this round's pushes, answered when it completes
    std::deque<HeldRequest> next_round;  // pushes that arrived early, oldest first
  };

  void Take(Path& path, HeldRequest request);
  void ApplyRound(Path& path);
  // Drops the keys whose summed gradient is all zeros from merged_*.
  void DropUntouchedKeys();
  ps::KVPairs<float> Values(const ps::SArray<ps::Key>& keys);

  mutable std::mutex mu_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<Optimizer> optimizer_;
  ParameterTable table_;
  uint32_t num_workers_;
  Path workers_;
  Path switch_;
  std::function<void()> on_worker_round_;
  SyncServerStats stats_;
  uint64_t restored_iteration_ = 0;
  std::vector<ps::Key> merged_keys_;
  std::vector<float> merged_sums_;
  uint32_t rounds_applied_ = 0;  // the workers' rounds, for LIBRA_TRACE
};

}  // namespace libra::train
