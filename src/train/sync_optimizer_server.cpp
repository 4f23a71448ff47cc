#include "train/sync_optimizer_server.h"

#include <algorithm>
#include <utility>

#include "ps/internal/logging.h"

namespace libra::train {

SyncOptimizerServer::SyncOptimizerServer(const ModelConfig& model, const OptimizerConfig& optimizer,
                                         uint32_t num_workers)
    : model_(CreateModel(model)),
      optimizer_(CreateOptimizer(optimizer)),
      table_(*model_, *optimizer_),
      round_(num_workers, model_->value_length()) {}

void SyncOptimizerServer::Serve(ps::KVServer<float>* server) {
  server->set_request_handle(
      [this](const ps::KVMeta& meta, const ps::KVPairs<float>& data, ps::KVServer<float>* s) {
        Handle(meta, data,
               [s](const ps::KVMeta& m, const ps::KVPairs<float>& r) { s->Response(m, r); });
      });
}

void SyncOptimizerServer::Handle(const ps::KVMeta& meta, const ps::KVPairs<float>& data,
                                 const Respond& respond) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!meta.push) {
    ++stats_.pulls;
    respond(meta, Values(data.keys));
    return;
  }
  HeldRequest request{meta, data, respond};
  const size_t length = model_->value_length();
  const bool lens_ok = std::all_of(data.lens.begin(), data.lens.end(),
                                   [&](int l) { return l == static_cast<int>(length); });
  if (data.vals.size() != data.keys.size() * length || !lens_ok || meta.num_merged < 1) {
    // The sender still waits for this iteration, so the push counts (as one
    // contribution, with no gradient) instead of stalling every worker.
    LOG(ERROR) << "push from node " << meta.sender << " has " << data.vals.size() << " values for "
               << data.keys.size() << " keys of length " << length << " (num_merged "
               << meta.num_merged << "): gradient ignored";
    ++stats_.malformed_pushes;
    request.meta.num_merged = 1;
    request.data.vals = ps::SArray<float>();
    request.data.keys = ps::SArray<ps::Key>();
  }
  Take(std::move(request));
}

void SyncOptimizerServer::Take(HeldRequest request) {
  if (!round_.Add(request.meta.sender, static_cast<uint32_t>(request.meta.num_merged),
                  request.data.keys, request.data.vals)) {
    ++stats_.deferred_pushes;
    next_round_.push_back(std::move(request));
    return;
  }
  ++stats_.pushes;
  held_.push_back(std::move(request));
  while (round_.complete()) {
    ApplyRound();
    // Early pushes join the new round in arrival order until one does not fit.
    while (!next_round_.empty() &&
           round_.Add(next_round_.front().meta.sender,
                      static_cast<uint32_t>(next_round_.front().meta.num_merged),
                      next_round_.front().data.keys, next_round_.front().data.vals)) {
      ++stats_.pushes;
      held_.push_back(std::move(next_round_.front()));
      next_round_.pop_front();
    }
  }
}

void SyncOptimizerServer::ApplyRound() {
  round_.Merge(&merged_keys_, &merged_sums_);
  table_.Push(merged_keys_.data(), merged_keys_.size(), merged_sums_.data(),
              round_.expected_contributions());
  stats_.keys_updated += merged_keys_.size();
  ++stats_.rounds;
  for (const HeldRequest& r : held_) {
    r.respond(r.meta, r.meta.pull ? Values(r.data.keys) : ps::KVPairs<float>());
  }
  held_.clear();
  round_.Clear();
}

ps::KVPairs<float> SyncOptimizerServer::Values(const ps::SArray<ps::Key>& keys) {
  ps::KVPairs<float> res;
  res.keys = keys;
  res.vals.resize(keys.size() * model_->value_length());
  table_.Pull(keys.data(), keys.size(), res.vals.data());
  return res;
}

SyncServerStats SyncOptimizerServer::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  SyncServerStats s = stats_;
  s.parameters = table_.size();
  return s;
}

uint64_t SyncOptimizerServer::Fingerprint() const {
  std::lock_guard<std::mutex> lock(mu_);
  return table_.Fingerprint();
}

}  // namespace libra::train
