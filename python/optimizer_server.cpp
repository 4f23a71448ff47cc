#include "optimizer_server.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "ps/internal/logging.h"

namespace libra::python {
namespace {

uint64_t Mix(uint64_t x) {  // splitmix64's finaliser
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

bool LensAre(const ps::SArray<int>& lens, uint32_t dim) {
  return std::all_of(lens.begin(), lens.end(), [&](int l) { return l == static_cast<int>(dim); });
}

}  // namespace

OptimizerServer::OptimizerServer(const OptimizerServerConfig& config, uint32_t num_workers)
    : config_(config),
      num_workers_(num_workers),
      optimizer_(train::CreateOptimizer(config.optimizer)),
      entry_length_(config.dim * (1 + optimizer_->state_per_value())),
      workers_(num_workers, config.dim),
      switch_(num_workers, config.dim) {
  if (config.dim == 0) throw std::invalid_argument("dim must be at least 1");
  if (!(config.init_scale >= 0)) throw std::invalid_argument("init_scale must be >= 0");
  if (num_workers == 0) throw std::invalid_argument("the job has no workers");
}

void OptimizerServer::Serve(int app_id) {
  server_ = std::make_unique<ps::KVServer<float>>(app_id);
  server_->set_request_handle([this](const ps::KVMeta& meta, const ps::KVPairs<float>& data,
                                     ps::KVServer<float>* s) { Handle(meta, data, s); });
}

void OptimizerServer::Stop() { server_.reset(); }

void OptimizerServer::InitialValue(ps::Key key, float* out) const {
  if (auto given = config_.initial.find(key); given != config_.initial.end()) {
    std::copy(given->second.begin(), given->second.end(), out);
    return;
  }
  for (uint32_t j = 0; j < config_.dim; ++j) {
    if (config_.init_scale == 0.0f) {
      out[j] = 0.0f;
      continue;
    }
    const uint64_t bits = Mix(config_.seed ^ Mix(key * 0x100000001b3ULL + j));
    const double unit = static_cast<double>(bits >> 11) * 0x1.0p-53;  // [0, 1)
    out[j] = static_cast<float>((2.0 * unit - 1.0) * config_.init_scale);
  }
}

float* OptimizerServer::Entry(ps::Key key) {
  bool created = false;
  const size_t offset = size_t{index_.FindOrAdd(key, &created)} * entry_length_;
  if (created) {
    storage_.resize(storage_.size() + entry_length_);
    float* entry = storage_.data() + offset;
    InitialValue(key, entry);
    optimizer_->InitState(entry, entry + config_.dim, config_.dim);
  }
  return storage_.data() + offset;
}

void OptimizerServer::Step(const ps::Key* keys, size_t count, const float* sums,
                           uint32_t contributors, bool skip_zero_sums) {
  const uint32_t dim = config_.dim;
  for (size_t i = 0; i < count; ++i) {
    const float* g = sums + i * dim;
    if (skip_zero_sums && std::all_of(g, g + dim, [](float x) { return x == 0.0f; })) continue;
    float* entry = Entry(keys[i]);
    optimizer_->Update(entry, entry + dim, g, contributors, dim);
    ++stats_.keys_updated;
  }
}

ps::KVPairs<float> OptimizerServer::Answer(const ps::KVMeta& meta, const ps::KVPairs<float>& data) {
  ps::KVPairs<float> res;
  if (!meta.pull) return res;
  const uint32_t dim = config_.dim;
  res.keys = data.keys;
  if (meta.push && data.vals.size() != data.keys.size() * dim) {
    // A malformed push-pull: the worker expects as many values as it pushed.
    res.vals.resize(data.vals.size(), std::numeric_limits<float>::quiet_NaN());
    res.lens = data.lens;
    return res;
  }
  res.vals.resize(data.keys.size() * dim);
  for (size_t i = 0; i < data.keys.size(); ++i) {
    const float* entry = Entry(data.keys[i]);
    std::copy(entry, entry + dim, res.vals.data() + i * dim);
  }
  return res;
}

void OptimizerServer::Handle(const ps::KVMeta& meta, const ps::KVPairs<float>& data,
                             ps::KVServer<float>* server) {
  std::lock_guard<std::mutex> lock(mu_);
  if (meta.pull) ++stats_.pulls;
  if (!meta.push) {
    server->Response(meta, Answer(meta, data));
    return;
  }
  ++stats_.pushes;
  if (meta.from_switch) ++stats_.switch_pushes;
  const uint32_t dim = config_.dim;
  Held request{meta, data, false};
  if (data.vals.size() != data.keys.size() * dim || !LensAre(data.lens, dim)) {
    LOG(ERROR) << "libra.run_server: a push from "
               << (meta.from_switch ? std::string("the switch")
                                    : "node " + std::to_string(meta.sender))
               << " has " << data.vals.size() << " values for " << data.keys.size()
               << " keys, this server holds " << dim << " per key (dim): gradient ignored";
    ++stats_.malformed_pushes;
    if (!config_.sync) {
      server->Response(meta, Answer(meta, data));  // a push-pull gets NaN
      return;
    }
    // In sync mode it still counts as its sender's contribution (with no
    // gradient), or the round would never complete.
    if (meta.pull) {
      server->Response(meta, Answer(meta, data));
      request.answered = true;
    }
    request.data = ps::KVPairs<float>();
  }
  if (!config_.sync) {
    // One step on the gradient this push carries, however many workers it sums.
    Step(data.keys.data(), data.keys.size(), data.vals.data(), 1, meta.from_switch);
    server->Response(meta, Answer(meta, data));
    return;
  }
  if (meta.from_switch && meta.num_merged != static_cast<int>(num_workers_)) {
    LOG(ERROR) << "libra.run_server: a switch push of " << meta.num_merged << " workers, not "
               << num_workers_;
  }
  if (!meta.from_switch) request.meta.num_merged = 1;
  if (meta.from_switch) request.meta.num_merged = static_cast<int>(num_workers_);
  Take(meta.from_switch ? switch_ : workers_, std::move(request), server);
}

void OptimizerServer::Take(Path& path, Held request, ps::KVServer<float>* server) {
  if (!path.round.Add(request.meta.sender, static_cast<uint32_t>(request.meta.num_merged),
                      request.data.keys, request.data.vals)) {
    path.next_round.push_back(std::move(request));
    return;
  }
  path.held.push_back(std::move(request));
  while (path.round.complete()) {
    ApplyRound(path, server);
    while (!path.next_round.empty()) {
      Held& early = path.next_round.front();
      if (!path.round.Add(early.meta.sender, static_cast<uint32_t>(early.meta.num_merged),
                          early.data.keys, early.data.vals)) {
        break;
      }
      path.held.push_back(std::move(early));
      path.next_round.pop_front();
    }
  }
}

void OptimizerServer::ApplyRound(Path& path, ps::KVServer<float>* server) {
  const bool from_switch = &path == &switch_;
  path.round.Merge(&merged_keys_, &merged_sums_);
  // The mean of the iteration's gradients, as `libra train` steps.
  Step(merged_keys_.data(), merged_keys_.size(), merged_sums_.data(),
       path.round.expected_contributions(), from_switch);
  if (!from_switch) ++stats_.rounds;
  for (const Held& r : path.held) {
    if (r.answered) continue;  // a malformed push-pull, answered with NaN
    server->Response(r.meta, Answer(r.meta, r.data));
  }
  path.held.clear();
  path.round.Clear();
}

OptimizerServerStats OptimizerServer::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  OptimizerServerStats s = stats_;
  s.parameters = index_.size();
  return s;
}

std::vector<float> OptimizerServer::Values(const std::vector<ps::Key>& keys) const {
  std::lock_guard<std::mutex> lock(mu_);
  const uint32_t dim = config_.dim;
  std::vector<float> out(keys.size() * dim);
  for (size_t i = 0; i < keys.size(); ++i) {
    const uint32_t entry = index_.Find(keys[i]);
    if (entry == train::KeyIndex::kAbsent) {
      InitialValue(keys[i], out.data() + i * dim);
    } else {
      std::copy_n(storage_.data() + size_t{entry} * entry_length_, dim, out.data() + i * dim);
    }
  }
  return out;
}

}  // namespace libra::python
