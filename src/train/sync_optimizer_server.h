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
#include "train/model.h"
#include "train/optimizer.h"
#include "train/parameter_table.h"

namespace libra::train {

struct SyncServerStats {
  uint64_t rounds = 0;            // iterations applied
  uint64_t pushes = 0;            // push requests taken (one per worker per round)
  uint64_t pulls = 0;             // pull requests answered
  uint64_t keys_updated = 0;      // optimizer steps, one per key per round
  uint64_t malformed_pushes = 0;  // wrong value count: counted, gradient ignored
  uint64_t deferred_pushes = 0;   // arrived while their sender's previous round was open
  size_t parameters = 0;          // keys held
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

  SyncServerStats stats() const;
  uint64_t Fingerprint() const;
  uint32_t value_length() const { return model_->value_length(); }

 private:
  struct HeldRequest {
    ps::KVMeta meta;
    ps::KVPairs<float> data;
    Respond respond;
  };

  void Take(HeldRequest request);
  void ApplyRound();
  ps::KVPairs<float> Values(const ps::SArray<ps::Key>& keys);

  mutable std::mutex mu_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<Optimizer> optimizer_;
  ParameterTable table_;
  BspRound round_;
  std::vector<HeldRequest> held_;       // this round's pushes, answered when it completes
  std::deque<HeldRequest> next_round_;  // pushes that arrived early, oldest first
  SyncServerStats stats_;
  std::vector<ps::Key> merged_keys_;
  std::vector<float> merged_sums_;
};

}  // namespace libra::train
