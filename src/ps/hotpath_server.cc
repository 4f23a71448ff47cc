#include "ps/internal/hotpath_server.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <unordered_map>
#include <vector>

#include "hotpath_node.h"
#include "libra/hotpath_collector.h"
#include "ps/internal/logging.h"
#include "ps/internal/postoffice.h"
#include "ps/internal/threadsafe_queue.h"

namespace ps::hotpath {
namespace {

using libra::hotpath::CollectedEpoch;
using libra::hotpath::HotPathStatus;

class ServerPathImpl final : public ServerPath {
 public:
  explicit ServerPathImpl(Handle handle) : handle_(std::move(handle)) {
    HotPathNode* node = HotPathNode::Get();
    node->SetReport([this] { return Report(); });
    dispatcher_ = std::thread([this] { DispatchInOrder(); });
    node->SetRepairHandler(
        [this](const SimpleData& request, Repair repair) { OnRepair(request, repair); });
    node->OnServerInstall([this](const Install& install, libra::UdpEndpoint local) {
      StartCollecting(install, local);
    });
  }

  ~ServerPathImpl() override {
    HotPathNode::Get()->OnServerInstall(nullptr);
    HotPathNode::Get()->SetRepairHandler(nullptr);
    HotPathNode::Get()->SetReport(nullptr);
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
      collector_.reset();  // no more epochs
    }
    answered_.notify_all();
    epochs_.Push(std::nullopt);
    dispatcher_.join();
  }

  void OnResponse(int timestamp, const SArray<float>& vals) override {
    std::lock_guard<std::mutex> lock(mu_);
    responses_[timestamp] = vals;
    answered_.notify_all();
  }

 private:
  void StartCollecting(const Install& install, libra::UdpEndpoint local) {
    if (!install.enabled) return;
    const int rank = Postoffice::Get()->my_rank();
    const std::vector<uint32_t> owners =
        HotKeyOwners(*install.hot_set, install.owners, Postoffice::Get()->GetServerKeyRanges());
    std::vector<libra::hot::Key> owned;
    const auto keys = install.hot_set->keys();
    for (size_t i = 0; i < keys.size(); ++i) {
      if (owners[i] == static_cast<uint32_t>(rank)) owned.push_back(keys[i].key);
    }
    std::sort(owned.begin(), owned.end());
    std::lock_guard<std::mutex> lock(mu_);
    hot_set_ = install.hot_set;
    owned_keys_.CopyFrom(owned.data(), owned.size());
    owned_lens_.clear();
    owned_values_ = 0;
    for (libra::hot::Key key : owned) {
      const int len = static_cast<int>(hot_set_->keys()[hot_set_->Find(key)].value_len);
      published_offset_[key] = {owned_values_, static_cast<size_t>(len)};
      owned_lens_.push_back(len);
      owned_values_ += static_cast<size_t>(len);
    }
    if (owned.empty() || stopping_) return;
    libra::hotpath::HotCollectorOptions options;
    options.job_id = install.job_id;
    options.server_id = static_cast<uint16_t>(Postoffice::Get()->my_rank());
    options.switch_address = Config().switch_data;
    options.local = local;
    options.num_workers = install.num_workers;
    options.first_epoch = install.first_epoch;
    options.collect_by_row = true;
    collector_ = std::make_unique<libra::hotpath::HotCollector>(
        install.hot_set, owned, options,
        [this](CollectedEpoch epoch) { epochs_.Push(std::move(epoch)); });
  }

  // Each collected epoch: the sums into the handle, the new values out to
  // the switch. One epoch at a time, in order.
  void DispatchInOrder() {
    std::optional<CollectedEpoch> epoch;
    while (true) {
      epochs_.WaitAndPop(&epoch);
      if (!epoch) return;
      CHECK(epoch->status == HotPathStatus::kOk)
          << "libra: the switch stopped answering (switch_unresponsive) while collecting epoch "
          << epoch->epoch;
      if (Postoffice::Get()->verbose() >= 1) {
        LOG(INFO) << "libra: collected epoch " << epoch->epoch << ": " << epoch->keys.size()
                  << " keys, first sum " << (epoch->vals.empty() ? 0.f : epoch->vals[0]);
      }
      if (!epoch->saturated_keys.empty()) {
        LOG(WARNING) << "libra: " << epoch->saturated_keys.size() << " hot sums saturated in epoch "
                     << epoch->epoch;
      }
      Request push;
      push.push = true;
      push.num_merged = static_cast<int>(epoch->num_merged);
      push.keys.CopyFrom(epoch->keys.data(), epoch->keys.size());
      push.vals.CopyFrom(epoch->vals.data(), epoch->vals.size());
      push.lens.CopyFrom(epoch->lens.data(), epoch->lens.size());
      const auto applying = std::chrono::steady_clock::now();
      if (!Call(push)) return;

      // The handle answers for every owned key, so the copy kept for repairs
      // stays whole; only the keys pushed this epoch changed, and only those
      // go out, except in the first epoch, which gives the workers' replicas
      // their first value of every key.
      Request pull;
      pull.keys = owned_keys_;
      pull.lens = owned_lens_;
      std::optional<SArray<float>> values = Call(pull);
      if (!values) return;
      if (values->size() != owned_values_) {
        LOG(ERROR) << "libra: the request handle answered the hot keys' pull with "
                   << values->size() << " values, not " << owned_values_ << "; epoch "
                   << epoch->epoch << " not replicated";
        continue;
      }
      std::lock_guard<std::mutex> lock(mu_);
      if (!collector_) return;
      apply_micros_ += static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                                 std::chrono::steady_clock::now() - applying)
                                                 .count());
      const bool first = !published_epoch_.has_value();
      std::vector<float> changed;
      if (!first) {
        for (libra::hot::Key key : epoch->keys) {
          const auto [offset, len] = published_offset_.at(key);
          changed.insert(changed.end(), values->begin() + offset, values->begin() + offset + len);
        }
      }
      const std::span<const libra::hot::Key> keys =
          first ? std::span<const libra::hot::Key>(owned_keys_.data(), owned_keys_.size())
                : std::span<const libra::hot::Key>(epoch->keys);
      collector_->PublishUpdate(epoch->epoch, keys,
                                first ? std::span<const float>(values->data(), values->size())
                                      : std::span<const float>(changed));
      ++epochs_applied_;
      // Kept to answer REPAIRs of workers that lost some of the REPLICAs.
      published_epoch_ = epoch->epoch;
      published_vals_.assign(values->begin(), values->end());
      AnswerWaitingRepairs();
    }
  }

  // A worker's replica lacks values of `repair.epoch`: answer with what this
  // server published, once it has published that epoch. A server without
  // hot keys answers at once, empty.
  void OnRepair(const SimpleData& request, const Repair& repair) {
    std::lock_guard<std::mutex> lock(mu_);
    waiting_repairs_.emplace_back(request, repair);
    AnswerWaitingRepairs();
  }

  void AnswerWaitingRepairs() {
    for (auto it = waiting_repairs_.begin(); it != waiting_repairs_.end();) {
      const auto& [request, repair] = *it;
      const bool has_keys = collector_ != nullptr;
      if (has_keys && (!published_epoch_ || *published_epoch_ < repair.epoch)) {
        ++it;
        continue;
      }
      Repair answer;
      answer.epoch = published_epoch_.value_or(repair.epoch);
      for (libra::hot::Key key : repair.keys) {
        auto found = published_offset_.find(key);
        if (found == published_offset_.end()) continue;
        answer.keys.push_back(key);
        const auto [offset, len] = found->second;
        answer.vals.insert(answer.vals.end(), published_vals_.begin() + offset,
                           published_vals_.begin() + offset + len);
      }
      HotPathNode::Get()->AnswerRepair(request, answer);
      ++repairs_answered_;
      it = waiting_repairs_.erase(it);
    }
  }

  // Runs the handle and waits for its Response; nullopt when stopping.
  std::optional<SArray<float>> Call(Request request) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      request.timestamp = next_timestamp_++;
    }
    handle_(request);
    std::unique_lock<std::mutex> lock(mu_);
    answered_.wait(lock, [&] { return stopping_ || responses_.count(request.timestamp) > 0; });
    if (stopping_) return std::nullopt;
    SArray<float> vals = responses_[request.timestamp];
    responses_.erase(request.timestamp);
    return vals;
  }

  nlohmann::json Report() {
    std::lock_guard<std::mutex> lock(mu_);
    nlohmann::json out = {{"role", "server"},
                          {"epochs_collected", epochs_applied_},
                          {"owned_hot_keys", owned_keys_.size()},
                          {"repairs_answered", repairs_answered_},
                          {"apply_micros", apply_micros_}};
    if (hot_set_) {
      out["hot_keys"] = hot_set_->size();
      out["hot_values"] = hot_set_->num_values();
    }
    if (!collector_) return out;
    const libra::hotpath::HotCollectorCounters c = collector_->counters();
    out["collector"] = {{"epochs_collected", c.epochs_collected},
                        {"ready_received", c.ready_received},
                        {"ready_polls", c.ready_polls},
                        {"collect_packets", c.collect_packets},
                        {"retransmissions", c.retransmissions},
                        {"results", c.results},
                        {"written_values", c.written_values},
                        {"collect_micros", c.collect_micros},
                        {"by_row", collector_->collects_by_row()},
                        {"saturated_values", c.saturated_values},
                        {"update_packets", c.update_packets},
                        {"update_acks", c.update_acks},
                        {"update_retransmissions", c.update_retransmissions},
                        {"updates_abandoned", c.updates_abandoned},
                        {"packets_sent", c.packets_sent},
                        {"bytes_sent", c.bytes_sent},
                        {"packets_received", c.packets_received},
                        {"bytes_received", c.bytes_received},
                        {"malformed_packets", c.malformed_packets},
                        {"ignored_packets", c.ignored_packets}};
    return out;
  }

  Handle handle_;
  std::mutex mu_;
  std::condition_variable answered_;
  bool stopping_ = false;
  std::shared_ptr<const libra::hot::HotSet> hot_set_;
  SArray<libra::hot::Key> owned_keys_;  // ascending
  SArray<int> owned_lens_;
  size_t owned_values_ = 0;
  std::unique_ptr<libra::hotpath::HotCollector> collector_;
  ThreadsafeQueue<std::optional<CollectedEpoch>> epochs_;
  std::map<int, SArray<float>> responses_;
  int next_timestamp_ = 0;
  uint64_t epochs_applied_ = 0;
  std::optional<uint32_t> published_epoch_;
  std::unordered_map<libra::hot::Key, std::pair<size_t, size_t>> published_offset_;
  std::vector<float> published_vals_;
  std::list<std::pair<SimpleData, Repair>> waiting_repairs_;
  uint64_t repairs_answered_ = 0;
  uint64_t apply_micros_ = 0;  // the handle's push and pull of each epoch, summed
  std::thread dispatcher_;
};

}  // namespace

std::unique_ptr<ServerPath> ServerPath::Create(Handle handle) {
  if (!HotPathNode::Get()->enabled()) return nullptr;
  return std::make_unique<ServerPathImpl>(std::move(handle));
}

}  // namespace ps::hotpath
