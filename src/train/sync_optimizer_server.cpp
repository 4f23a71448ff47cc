#include "train/sync_optimizer_server.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "hotpath/node/epoch_trace.h"
#include "ps/internal/logging.h"

namespace libra::train {

SyncOptimizerServer::SyncOptimizerServer(const ModelConfig& model, const OptimizerConfig& optimizer,
                                         uint32_t num_workers)
    : model_(CreateModel(model)),
      optimizer_(CreateOptimizer(optimizer)),
      table_(*model_, *optimizer_),
      num_workers_(num_workers),
      workers_(num_workers, model_->value_length()),
      switch_(num_workers, model_->value_length()) {}

void SyncOptimizerServer::Serve(ps::KVServer<float>* server) {
  server->set_request_handle(
      [this](const ps::KVMeta& meta, const ps::KVPairs<float>& data, ps::KVServer<float>* s) {
        Handle(meta, data,
               [s](const ps::KVMeta& m, const ps::KVPairs<float>& r) { s->Response(m, r); });
      });
}

void SyncOptimizerServer::set_on_worker_round(std::function<void()> observer) {
  std::lock_guard<std::mutex> lock(mu_);
  on_worker_round_ = std::move(observer);
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
  // The switch always delivers all N workers at once (one round per push).
  const bool merged_ok =
      meta.from_switch ? meta.num_merged == static_cast<int>(num_workers_)
                       : meta.num_merged >= 1 && meta.num_merged <= static_cast<int>(num_workers_);
  if (data.vals.size() != data.keys.size() * length || !lens_ok || !merged_ok) {
    // The sender still waits for this iteration, so the push counts (as a
    // contribution with no gradient) instead of stalling every worker.
    LOG(ERROR) << (meta.from_switch ? "switch push" : "push from node ")
               << (meta.from_switch ? "" : std::to_string(meta.sender)) << " has "
               << data.vals.size() << " values for " << data.keys.size() << " keys of length "
               << length << " (num_merged " << meta.num_merged << "): gradient ignored";
    ++stats_.malformed_pushes;
    request.meta.num_merged = meta.from_switch ? static_cast<int>(num_workers_) : 1;
    request.data.vals = ps::SArray<float>();
    request.data.keys = ps::SArray<ps::Key>();
  }
  Take(meta.from_switch ? switch_ : workers_, std::move(request));
}

void SyncOptimizerServer::Take(Path& path, HeldRequest request) {
  if (!path.round.Add(request.meta.sender, static_cast<uint32_t>(request.meta.num_merged),
                      request.data.keys, request.data.vals)) {
    ++stats_.deferred_pushes;
    path.next_round.push_back(std::move(request));
    return;
  }
  if (&path == &workers_) ++stats_.pushes;
  path.held.push_back(std::move(request));
  while (path.round.complete()) {
    ApplyRound(path);
    // Early pushes join the new round in arrival order until one does not fit.
    while (!path.next_round.empty()) {
      HeldRequest& early = path.next_round.front();
      if (!path.round.Add(early.meta.sender, static_cast<uint32_t>(early.meta.num_merged),
                          early.data.keys, early.data.vals)) {
        break;
      }
      if (&path == &workers_) ++stats_.pushes;
      path.held.push_back(std::move(early));
      path.next_round.pop_front();
    }
  }
}

void SyncOptimizerServer::ApplyRound(Path& path) {
  const bool from_switch = &path == &switch_;
  path.round.Merge(&merged_keys_, &merged_sums_);
  if (from_switch) {
    const size_t pushed = merged_keys_.size();
    DropUntouchedKeys();
    stats_.switch_keys_untouched += pushed - merged_keys_.size();
    stats_.switch_keys_updated += merged_keys_.size();
    ++stats_.switch_rounds;
  } else {
    ++stats_.rounds;
  }
  // A round of one push that asks for its keys' values back (the switch's:
  // the hot path publishes them), when those are the keys stepped in the
  // same order (no key dropped, keys ascending): the step gives the values
  // without a second lookup.
  const bool answer_from_step =
      path.held.size() == 1 && path.held[0].meta.pull &&
      std::equal(merged_keys_.begin(), merged_keys_.end(), path.held[0].data.keys.begin(),
                 path.held[0].data.keys.end());
  ps::KVPairs<float> stepped;
  if (answer_from_step) {
    stepped.keys = path.held[0].data.keys;
    stepped.vals.resize(merged_keys_.size() * model_->value_length());
  }
  table_.Push(merged_keys_.data(), merged_keys_.size(), merged_sums_.data(),
              path.round.expected_contributions(),
              answer_from_step ? stepped.vals.data() : nullptr);
  stats_.keys_updated += merged_keys_.size();
  if (!from_switch && on_worker_round_) on_worker_round_();
  if (answer_from_step) {
    path.held[0].respond(path.held[0].meta, stepped);
  } else {
    for (const HeldRequest& r : path.held) {
      r.respond(r.meta, r.meta.pull ? Values(r.data.keys) : ps::KVPairs<float>());
    }
  }
  path.held.clear();
  path.round.Clear();
  if (!from_switch) hotpath::TraceEpoch("round_applied", 0, rounds_applied_++);
}

void SyncOptimizerServer::DropUntouchedKeys() {
  const size_t length = model_->value_length();
  size_t kept = 0;
  for (size_t i = 0; i < merged_keys_.size(); ++i) {
    const float* sum = merged_sums_.data() + i * length;
    if (std::all_of(sum, sum + length, [](float g) { return g == 0.0f; })) continue;
    merged_keys_[kept] = merged_keys_[i];
    std::copy(sum, sum + length, merged_sums_.data() + kept * length);
    ++kept;
  }
  merged_keys_.resize(kept);
  merged_sums_.resize(kept * length);
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

uint64_t SyncOptimizerServer::iteration() const {
  std::lock_guard<std::mutex> lock(mu_);
  return restored_iteration_ + stats_.rounds;
}

ShardCheckpoint SyncOptimizerServer::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  ShardCheckpoint c;
  c.value_length = model_->value_length();
  c.state_per_value = optimizer_->state_per_value();
  c.optimizer_kind = static_cast<uint32_t>(optimizer_->config().kind);
  c.iteration = restored_iteration_ + stats_.rounds;
  table_.Export(&c.keys, &c.entries);
  return c;
}

void SyncOptimizerServer::Restore(const ShardCheckpoint& c) {
  std::lock_guard<std::mutex> lock(mu_);
  if (c.value_length != model_->value_length() ||
      c.state_per_value != optimizer_->state_per_value() ||
      c.optimizer_kind != static_cast<uint32_t>(optimizer_->config().kind)) {
    throw std::invalid_argument("the checkpoint holds " + std::to_string(c.value_length) +
                                " values and " + std::to_string(c.state_per_value) +
                                " optimizer floats per value of optimizer " +
                                OptimizerKindName(static_cast<OptimizerKind>(c.optimizer_kind)) +
                                "; this job has " + std::to_string(model_->value_length()) +
                                " and " + std::to_string(optimizer_->state_per_value()) + " (" +
                                OptimizerKindName(optimizer_->config().kind) + ")");
  }
  // Pushes already applied or held would be lost or applied to the wrong state.
  if (stats_.pushes > 0 || stats_.switch_rounds > 0 || !workers_.held.empty() ||
      !workers_.next_round.empty() || !switch_.held.empty()) {
    throw std::logic_error("a checkpoint can only be restored before the first push");
  }
  table_.Import(c.keys, c.entries);
  restored_iteration_ = c.iteration;
}

}  // namespace libra::train
