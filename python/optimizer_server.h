// The request handle behind `libra.run_server` / `libra.KVServer`: per-key
// parameters (`dim` floats each) and optimizer state (SGD, Adagrad, FTRL of
// src/train/optimizer.h), updated in C++ with no Python in the loop.
//
// Two modes:
//  - asynchronous (default): every push is applied when it arrives, as one
//    optimizer step on the gradient it carries. A push the switch summed over
//    N workers (KVMeta::num_merged = N) is one step on that sum, which for SGD
//    is exactly the N steps the plain parameter server would take, so turning
//    Libra on does not change an SGD model beyond the switch's rounding.
//  - synchronous (BSP, as `libra train`): a server completes an iteration when
//    every worker's push is in (its workers must push to every server each
//    iteration: `libra.KVWorker(sync=True)`), merges them in worker order
//    (train/bsp_round.h), steps once per key with their mean, and only then
//    answers the pushes. The switch's push of N is its own round.
//
// Keys are created on first touch: their given initial value, else zeros or
// uniform in [-init_scale, init_scale] as a function of (seed, key, j) only,
// so every run agrees.
// A push whose value count is not dim per key is logged and ignored (its
// push-pull is answered with NaN), since PS-lite has no way to send a worker
// an error.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "ps/kv_app.h"
#include "train/bsp_round.h"
#include "train/key_index.h"
#include "train/optimizer.h"

namespace libra::python {

struct OptimizerServerConfig {
  train::OptimizerConfig optimizer;
  uint32_t dim = 1;
  float init_scale = 0.0f;
  uint64_t seed = 1;
  bool sync = false;
  // Keys whose first value is given (dim floats each) instead of drawn: the
  // dense parameters of a PyTorch model, as its own initialisation made them.
  std::unordered_map<ps::Key, std::vector<float>> initial;
};

struct OptimizerServerStats {
  uint64_t pushes = 0;            // push requests taken (the switch's included)
  uint64_t pulls = 0;             // pull requests answered (the switch path's included)
  uint64_t switch_pushes = 0;     // aggregated pushes from Libra's switch
  uint64_t keys_updated = 0;      // optimizer steps, one per key per update
  uint64_t rounds = 0;            // sync mode: iterations of the workers' pushes applied
  uint64_t malformed_pushes = 0;  // wrong value count: logged, ignored
  size_t parameters = 0;          // keys held
};

class OptimizerServer {
 public:
  // Throws std::invalid_argument for a bad configuration.
  OptimizerServer(const OptimizerServerConfig& config, uint32_t num_workers);

  // Creates the KVServer of `app_id` with this handle; `this` must outlive it.
  void Serve(int app_id);
  // Destroys the KVServer (after ps::Finalize).
  void Stop();

  void Handle(const ps::KVMeta& meta, const ps::KVPairs<float>& data, ps::KVServer<float>* server);

  OptimizerServerStats stats() const;
  // The current values of `keys` (dim each; keys not held yet read as their
  // initial values without being created).
  std::vector<float> Values(const std::vector<ps::Key>& keys) const;
  const OptimizerServerConfig& config() const { return config_; }

 private:
  struct Held {
    ps::KVMeta meta;
    ps::KVPairs<float> data;
    bool answered;  // a malformed push-pull, answered at once
  };
  struct Path {
    Path(uint32_t n, uint32_t dim) : round(n, dim) {}
    train::BspRound round;
    std::vector<Held> held;
    std::deque<Held> next_round;
  };

  float* Entry(ps::Key key);  // creates the key on first touch
  void InitialValue(ps::Key key, float* out) const;
  void Step(const ps::Key* keys, size_t count, const float* sums, uint32_t contributors,
            bool skip_zero_sums);
  ps::KVPairs<float> Answer(const ps::KVMeta& meta, const ps::KVPairs<float>& data);
  void Take(Path& path, Held request, ps::KVServer<float>* server);
  void ApplyRound(Path& path, ps::KVServer<float>* server);

  OptimizerServerConfig config_;
  uint32_t num_workers_;
  std::unique_ptr<train::Optimizer> optimizer_;
  uint32_t entry_length_;  // dim values, then dim * state_per_value floats

  mutable std::mutex mu_;
  train::KeyIndex index_;  // key -> entry number (entry_length_ floats of storage_ each)
  std::vector<float> storage_;
  Path workers_;
  Path switch_;
  OptimizerServerStats stats_;
  std::vector<ps::Key> merged_keys_;
  std::vector<float> merged_sums_;
  std::unique_ptr<ps::KVServer<float>> server_;
};

}  // namespace libra::python
