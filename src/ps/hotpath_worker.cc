#include "ps/internal/hotpath_worker.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <deque>
#include <future>
#include <mutex>
#include <optional>
#include <thread>

#include "hotpath_node.h"
#include "libra/hot_key_table.h"
#include "libra/hotpath_sender.h"
#include "ps/internal/logging.h"
#include "ps/internal/postoffice.h"
#include "ps/internal/threadsafe_queue.h"

namespace ps::hotpath {
namespace {

using libra::hotpath::HotPathStatus;
using Clock = std::chrono::steady_clock;

// How long a hot Pull waits for the replica before the job is stopped with
// an error: far beyond a lost packet's cost (the engines retry within a
// second), so only a dead switch or server gets here.
constexpr std::chrono::seconds kReplicaDeadline{60};

// A replica silent this long makes the worker probe the switch: a switch
// that died after taking this worker's last push leaves nothing else to
// notice.
constexpr std::chrono::milliseconds kSilentReplicaTimeout{2000};

// An epoch whose REPLICAs have not begun to arrive this long after they were
// due (and whose switch still answers) is repaired as a whole. Partial
// arrivals are repaired sooner, through the sender's gap report. Not
// shorter: a large hot set on a slow link takes seconds to collect, and a
// repair moves the whole hot set over ZeroMQ, which made slow epochs slower.
constexpr std::chrono::milliseconds kRepairAfter{10000};

// How long a switch has to answer a probe before it is taken for dead: far
// beyond a round trip of any link the hot path runs on.
constexpr std::chrono::milliseconds kProbeBudget{3000};

// Values per key of a push: lens, or an even share of vals.
int LengthOf(const WorkerPath::Parts& parts, size_t i) {
  if (!parts.lens.empty()) return parts.lens[i];
  return parts.keys.empty() ? 0 : static_cast<int>(parts.vals.size() / parts.keys.size());
}

class WorkerPathImpl final : public WorkerPath {
 public:
  explicit WorkerPathImpl(ServerOf server_of)
      : node_(HotPathNode::Get()),
        first_hot_epoch_(Config().first_hot_epoch()),
        server_of_(std::move(server_of)) {
    drain_id_ = node_->AddDrain([this] { Drain(); });
    node_->SetReport([this] { return Report(); });
    completer_ = std::thread([this] { CompleteInOrder(); });
    watchdog_ = std::thread([this] { WatchReplica(); });
  }

  ~WorkerPathImpl() override {
    Drain();
    node_->RemoveDrain(drain_id_);
    node_->SetReport(nullptr);
    tasks_.Push(std::nullopt);
    completer_.join();
    {
      std::lock_guard<std::mutex> lock(watch_mu_);
      stopping_ = true;
    }
    watch_cond_.notify_all();
    watchdog_.join();
    sender_.reset();
  }

  bool Push(const Parts& all, bool pull_back, Parts* cold, PartDone done) override {
    std::lock_guard<std::mutex> lock(push_mu_);
    const uint32_t epoch = next_epoch_++;
    if (epoch < first_hot_epoch_) Count(all);
    if (epoch == first_hot_epoch_) Join(all);
    if (!sender_) {
      *cold = all;
      return false;
    }
    Parts hot;
    Split(all, &hot, cold);
    std::shared_future<HotPathStatus> sent =
        sender_->Push(epoch, std::span<const Key>(hot.keys.data(), hot.keys.size()),
                      std::span<const float>(hot.vals.data(), hot.vals.size()),
                      std::span<const int>(hot.lens.data(), hot.lens.size()));
    last_pushed_ = epoch;
    ++epochs_hot_;
    hot_values_ += hot.vals.size();
    cold_values_ += cold->vals.size();
    // An epoch without hot keys still sends its FIN, but nobody waits for it.
    if (hot.keys.empty() && !pull_back) return false;
    AddTask(Task{epoch, sent, pull_back, hot.keys, std::move(done)});
    return true;
  }

  bool Pull(const SArray<Key>& keys, SArray<Key>* cold_keys, PartDone done) override {
    std::lock_guard<std::mutex> lock(push_mu_);
    if (!sender_) {
      *cold_keys = keys;
      return false;
    }
    SArray<Key> hot;
    for (Key key : keys) (hot_set_->IsHot(key) ? hot : *cold_keys).push_back(key);
    if (hot.empty()) return false;
    AddTask(Task{last_pushed_, {}, true, hot, std::move(done)});
    return true;
  }

 private:
  struct Task {
    uint32_t epoch;
    std::shared_future<HotPathStatus> sent;  // invalid for a plain pull
    bool read_replica;
    SArray<Key> keys;
    PartDone done;
  };

  void AddTask(Task task) {
    {
      std::lock_guard<std::mutex> lock(drain_mu_);
      ++tasks_pending_;
    }
    tasks_.Push(std::move(task));
  }

  // Sampling phase: what the controller needs to choose the hot set.
  void Count(const Parts& all) {
    for (size_t i = 0; i < all.keys.size(); ++i) {
      Sampled& s = counts_.FindOrInsert(all.keys[i], Sampled{});
      ++s.updates;
      s.value_len = static_cast<uint32_t>(LengthOf(all, i));
    }
    for (float v : all.vals) max_abs_ = std::max(max_abs_, std::fabs(v));
  }

  void Join(const Parts& all) {
    for (float v : all.vals) max_abs_ = std::max(max_abs_, std::fabs(v));
    JoinRequest join;
    join.role = JoinRequest::Role::kWorker;
    join.rank = static_cast<uint32_t>(Postoffice::Get()->my_rank());
    join.address = node_->ReserveUdpEndpoint();
    join.max_abs_value = max_abs_;
    counts_.ForEach([&](Key key, const Sampled& s) {
      join.counts.push_back({key, s.value_len, s.updates, 0});
    });
    counts_.Clear();
    std::sort(join.counts.begin(), join.counts.end(),
              [](const KeyCount& a, const KeyCount& b) { return a.key < b.key; });
    SArray<Key> keys;
    for (const KeyCount& c : join.counts) keys.push_back(c.key);
    const std::vector<uint32_t> servers = server_of_(keys);
    for (size_t i = 0; i < join.counts.size(); ++i) join.counts[i].server = servers[i];
    Install install = node_->JoinAndWait(join);
    if (!install.enabled) return;  // the controller logged why
    hot_set_ = install.hot_set;
    libra::hotpath::HotSenderOptions options;
    options.job_id = install.job_id;
    options.worker_id = static_cast<uint16_t>(join.rank);
    options.switch_address = Config().switch_data;
    options.local = join.address;
    options.first_epoch = install.first_epoch;
    options.key_owners = KeyOwners(install);
    sender_ = std::make_unique<libra::hotpath::HotSender>(hot_set_, options);
    sender_->OnReplicaGap([this](const libra::hotpath::ReplicaGap& gap) {
      {
        std::lock_guard<std::mutex> lock(watch_mu_);
        gaps_.push_back(gap);
      }
      watch_cond_.notify_all();
    });
    LOG(INFO) << "libra: worker " << join.rank << " on the hot path from epoch "
              << install.first_epoch << " (" << hot_set_->size() << " hot keys)";
  }

  // The server that publishes each hot key: the one the servers collect by.
  static std::vector<uint16_t> KeyOwners(const Install& install) {
    const std::vector<uint32_t> owners =
        HotKeyOwners(*install.hot_set, install.owners, Postoffice::Get()->GetServerKeyRanges());
    return std::vector<uint16_t>(owners.begin(), owners.end());
  }

  // Keys of the hot set whose length matches it go hot, in the push's order.
  void Split(const Parts& all, Parts* hot, Parts* cold) const {
    size_t offset = 0;
    for (size_t i = 0; i < all.keys.size(); ++i) {
      const int len = LengthOf(all, i);
      const uint32_t index = hot_set_->Find(all.keys[i]);
      const bool is_hot = index != libra::hot::HotSet::kCold &&
                          hot_set_->keys()[index].value_len == static_cast<uint32_t>(len);
      Parts* to = is_hot ? hot : cold;
      to->keys.push_back(all.keys[i]);
      for (int j = 0; j < len; ++j) to->vals.push_back(all.vals[offset + j]);
      if (is_hot || !all.lens.empty()) to->lens.push_back(len);
      offset += len;
    }
  }

  void CompleteInOrder() {
    std::optional<Task> task;
    while (true) {
      tasks_.WaitAndPop(&task);
      if (!task) return;
      if (task->sent.valid()) {
        const HotPathStatus status = task->sent.get();
        CHECK(status == HotPathStatus::kOk)
            << "libra: the switch did not take epoch " << task->epoch << " ("
            << libra::hotpath::HotPathStatusName(status) << ")";
      }
      Parts values;
      if (task->read_replica) values = ReadReplica(task->epoch, task->keys);
      task->done(std::move(values));
      std::lock_guard<std::mutex> lock(drain_mu_);
      --tasks_pending_;
      drained_.notify_all();
    }
  }

  // Waits until the replica of `keys` has reached `epoch`; after each
  // timeout asks the servers for the values they published (a REPLICA lost).
  Parts ReadReplica(uint32_t epoch, const SArray<Key>& keys) {
    Parts out;
    out.keys = keys;
    std::vector<float> vals;
    std::vector<int> lens;
    const auto deadline = Clock::now() + kReplicaDeadline;
    auto next_repair = Clock::now() + kRepairAfter;
    while (sender_->Pull(std::span<const Key>(keys.data(), keys.size()), &vals, &lens,
                         kSilentReplicaTimeout) != HotPathStatus::kOk) {
      CHECK(Clock::now() < deadline)
          << "libra: the hot parameters did not reach the last pushed epoch within "
          << kReplicaDeadline.count() << " s (a server or the switch stopped)";
      // A switch that died after taking this worker's last push leaves
      // nothing else to notice: ask it.
      CHECK(sender_->ProbeSwitch(kProbeBudget))
          << "libra: the switch does not answer probes (switch_unresponsive) while epoch " << epoch
          << " is being aggregated";
      vals.clear();
      lens.clear();
      if (Clock::now() < next_repair) continue;
      next_repair = Clock::now() + kRepairAfter;
      Repair request;
      request.epoch = epoch;
      request.keys.assign(keys.begin(), keys.end());
      for (const Repair& answer : node_->RequestRepair(request)) {
        sender_->RepairReplica(answer.epoch, answer.keys, answer.vals);
        repaired_values_ += answer.vals.size();
      }
      ++repairs_;
    }
    out.vals.CopyFrom(vals.data(), vals.size());
    out.lens.CopyFrom(lens.data(), lens.size());
    return out;
  }

  // Lost REPLICAs of an epoch leave the replica behind, and the sender will
  // not start epoch e+2 before epoch e is complete (the switch's banks). A
  // pull repairs the keys it reads; this repairs the rest: when the replica
  // has stayed more than one epoch behind the last push for kRepairAfter, it
  // asks the servers for everything they published.
  void WatchReplica() {
    // Since when the replica has been behind; the epoch of the clock (zero)
    // while it is not.
    Clock::time_point behind_since{};
    std::unique_lock<std::mutex> lock(watch_mu_);
    while (true) {
      watch_cond_.wait_for(lock, std::chrono::milliseconds(50),
                           [this] { return stopping_ || !gaps_.empty(); });
      if (stopping_) return;
      // Some REPLICAs of an epoch came and others did not (the sender saw it
      // after its gap timeout): a loss, repaired for just those keys.
      while (!gaps_.empty() && !stopping_) {
        libra::hotpath::ReplicaGap gap = std::move(gaps_.front());
        gaps_.pop_front();
        lock.unlock();
        Repair request;
        request.epoch = gap.epoch;
        request.keys = std::move(gap.keys);
        RepairKeys(request);
        lock.lock();
      }
      std::optional<uint32_t> wanted;
      // Not under watch_mu_: the sender's I/O thread takes it to report a
      // gap, and must never wait for push_mu_ (Drain holds it while it
      // probes the switch through that thread).
      lock.unlock();
      {
        std::lock_guard<std::mutex> push_lock(push_mu_);
        if (sender_ && epochs_hot_ >= 2) {
          const std::optional<uint32_t> reached = sender_->ReplicaEpoch();
          if (!reached || *reached + 1 < last_pushed_) {
            wanted = reached ? *reached + 1 : first_hot_epoch_;
          }
        }
      }
      lock.lock();
      if (stopping_) return;
      if (!wanted) {
        behind_since = {};
        continue;
      }
      if (behind_since == Clock::time_point{}) behind_since = Clock::now();
      if (Clock::now() - behind_since < kRepairAfter) continue;
      lock.unlock();
      RepairAll(*wanted);
      lock.lock();
      behind_since = {};
    }
  }

  // Asks the servers for all hot values as of `epoch` (they answer once they
  // have published it) and installs them in the replica.
  void RepairAll(uint32_t epoch) {
    Repair request;
    request.epoch = epoch;
    for (const libra::hot::HotKey& k : hot_set_->keys()) request.keys.push_back(k.key);
    RepairKeys(request);
  }

  void RepairKeys(const Repair& request) {
    for (const Repair& answer : node_->RequestRepair(request)) {
      sender_->RepairReplica(answer.epoch, answer.keys, answer.vals);
      repaired_values_ += answer.vals.size();
    }
    ++repairs_;
  }

  // Waits until the servers have applied every epoch this worker pushed
  // (the replica reached it), so a job's last update is in before Finalize.
  void Drain() {
    {
      std::unique_lock<std::mutex> lock(drain_mu_);
      drained_.wait(lock, [this] { return tasks_pending_ == 0; });
    }
    std::lock_guard<std::mutex> lock(push_mu_);
    if (!sender_ || epochs_hot_ == 0) return;
    const auto start = Clock::now();
    auto next_probe = start + kSilentReplicaTimeout;
    auto next_repair = start + kRepairAfter;
    while (true) {
      const std::optional<uint32_t> reached = sender_->ReplicaEpoch();
      if (reached && *reached >= last_pushed_) return;
      if (Clock::now() > start + kReplicaDeadline) {
        LOG(WARNING) << "libra: the replica did not reach epoch " << last_pushed_
                     << " before Finalize";
        return;
      }
      if (Clock::now() > next_probe) {
        CHECK(sender_->ProbeSwitch(kProbeBudget))
            << "libra: the switch does not answer probes (switch_unresponsive) while epoch "
            << last_pushed_ << " is being aggregated";
        next_probe = Clock::now() + kSilentReplicaTimeout;
      }
      if (Clock::now() > next_repair) {  // the last epoch's REPLICAs were lost
        RepairAll(last_pushed_);
        next_repair = Clock::now() + kRepairAfter;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  nlohmann::json Report() {
    std::lock_guard<std::mutex> lock(push_mu_);
    nlohmann::json out = {{"role", "worker"},
                          {"epochs_hot", epochs_hot_},
                          {"hot_values_pushed", hot_values_},
                          {"cold_values_pushed", cold_values_},
                          {"replica_repairs", repairs_.load()},
                          {"repaired_values", repaired_values_.load()}};
    if (!sender_) return out;
    const libra::hotpath::HotSenderCounters c = sender_->counters();
    out["hot_keys"] = hot_set_->size();
    out["hot_values"] = hot_set_->num_values();
    const double slots = double(c.data_packets) * hot_set_->layout().num_arrays;
    out["slot_utilization"] = slots > 0 ? double(hot_values_) / slots : 0.0;
    out["sender"] = {{"epochs_pushed", c.epochs_pushed},
                     {"epochs_acked", c.epochs_acked},
                     {"data_packets", c.data_packets},
                     {"fin_packets", c.fin_packets},
                     {"retransmissions", c.retransmissions},
                     {"timeouts", c.timeouts},
                     {"packets_sent", c.packets_sent},
                     {"bytes_sent", c.bytes_sent},
                     {"packets_received", c.packets_received},
                     {"bytes_received", c.bytes_received},
                     {"replica_packets", c.replica_packets},
                     {"replica_gaps", c.replica_gaps},
                     {"replica_epochs", c.replica_epochs},
                     {"replica_values", c.replica_values},
                     {"data_micros", c.data_micros},
                     {"pull_wait_micros", c.pull_wait_micros},
                     {"malformed_packets", c.malformed_packets},
                     {"ignored_packets", c.ignored_packets}};
    return out;
  }

  struct Sampled {
    uint64_t updates = 0;
    uint32_t value_len = 1;
  };

  HotPathNode* node_;
  const uint32_t first_hot_epoch_;
  const ServerOf server_of_;
  int drain_id_ = 0;

  std::mutex push_mu_;  // epochs are numbered and handed to the sender in call order
  uint32_t next_epoch_ = 0;
  uint32_t last_pushed_ = 0;
  libra::hot::HotKeyTable<Sampled> counts_;
  float max_abs_ = 0;
  std::shared_ptr<const libra::hot::HotSet> hot_set_;
  std::unique_ptr<libra::hotpath::HotSender> sender_;
  uint64_t epochs_hot_ = 0, hot_values_ = 0, cold_values_ = 0;
  std::atomic<uint64_t> repairs_{0}, repaired_values_{0};

  ThreadsafeQueue<std::optional<Task>> tasks_;
  std::mutex drain_mu_;
  std::condition_variable drained_;
  int tasks_pending_ = 0;  // guarded by drain_mu_
  std::thread completer_;
  std::mutex watch_mu_;
  std::condition_variable watch_cond_;
  bool stopping_ = false;
  std::deque<libra::hotpath::ReplicaGap> gaps_;  // reported by the sender, to repair
  std::thread watchdog_;
};

}  // namespace

std::unique_ptr<WorkerPath> WorkerPath::Create(ServerOf server_of) {
  if (!HotPathNode::Get()->enabled()) return nullptr;
  return std::make_unique<WorkerPathImpl>(std::move(server_of));
}

}  // namespace ps::hotpath
