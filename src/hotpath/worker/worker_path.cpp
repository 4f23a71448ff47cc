#include "hotpath/worker/worker_path.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <deque>
#include <future>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "hot/hot_key_table.h"
#include "hot/hot_switch_layout.h"
#include "hotpath/messages/written_keys.h"
#include "hotpath/node/hot_path_node.h"
#include "hotpath/worker/hot_sender.h"
#include "hotpath/worker/sampled_counts.h"
#include "ps/internal/logging.h"
#include "ps/internal/postoffice.h"
#include "ps/internal/threadsafe_queue.h"
#include "wire/pipeline_profile.h"

namespace libra::hotpath {
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
int LengthOf(const ps::WorkerHotPath::Parts& parts, size_t i) {
  if (!parts.lens.empty()) return parts.lens[i];
  return parts.keys.empty() ? 0 : static_cast<int>(parts.vals.size() / parts.keys.size());
}

// How often a read waiting for the replica looks whether the worker fell
// back meanwhile (then the servers answer it instead).
constexpr std::chrono::milliseconds kReplicaPollSlice{100};

// Epochs sent to the servers that a worker keeps for a server that asks for
// the values of saturated keys: a server applies epochs in order, and a
// worker runs at most an epoch or two ahead of the slowest.
constexpr size_t kEpochsKeptAfterSending = 8;

// How long a resumed hot path waits for the failed incarnation's sender to
// let go of the UDP address the new one binds.
constexpr std::chrono::seconds kRetireBudget{5};

// ResumeAtEpoch's epoch, taken by the worker path at its first push.
std::atomic<uint32_t> resume_epoch{0};

class WorkerPathImpl final : public ps::WorkerHotPath {
 public:
  explicit WorkerPathImpl(ServerOf server_of)
      : node_(HotPathNode::Get()),
        first_hot_epoch_(Config().first_hot_epoch()),
        server_of_(std::move(server_of)) {
    drain_id_ = node_->AddDrain([this] { Drain(); });
    node_->SetReport([this] { return Report(); });
    HotPathNode::SwitchEvents events;
    events.switch_down = [this](const SwitchDown& down) {
      FallBack(down.generation, down.epoch, "the controller says the switch is down", false);
    };
    events.resume_query = [this] { return HoldForResume(); };
    events.resume = [this](const Resume& resume) { OnResume(resume); };
    events.values = [this](const Repair& ask) { return ValuesOf(ask); };
    node_->SetSwitchEvents(std::move(events));
    completer_ = std::thread([this] { CompleteInOrder(); });
    watchdog_ = std::thread([this] { WatchReplica(); });
  }

  ~WorkerPathImpl() override {
    Drain();
    node_->RemoveDrain(drain_id_);
    node_->SetReport(nullptr);
    node_->SetSwitchEvents({});
    tasks_.Push(std::nullopt);
    completer_.join();
    {
      std::lock_guard<std::mutex> lock(watch_mu_);
      stopping_ = true;
    }
    watch_cond_.notify_all();
    watchdog_.join();
    {
      std::lock_guard<std::mutex> lock(push_mu_);
      hold_from_.reset();
    }
    resume_cond_.notify_all();
    sender_.reset();
  }

  bool Push(const Parts& all, bool pull_back, Parts* cold, PartDone done) override {
    std::unique_lock<std::mutex> lock(push_mu_);
    // Between RESUME_QUERY and RESUME the controller picks the epoch the hot
    // path resumes at; this worker pushes nothing from its answer on.
    resume_cond_.wait(lock, [this] { return !hold_from_ || next_epoch_ < *hold_from_; });
    if (epochs_pushed_++ == 0) next_epoch_ = resume_epoch.load();
    const uint32_t epoch = next_epoch_++;
    if (epoch < first_hot_epoch_) Count(all);
    if (epoch >= first_hot_epoch_ && !joined_) Join(all, epoch);
    if (!hot_set_) {
      *cold = all;
      return false;
    }
    if (resume_ && epoch == resume_->first_epoch)
      StartSender(resume_->job_id, epoch, resume_->generation);
    Parts hot;
    Split(all, &hot, cold);
    if (epochs_hot_ == 0 && hot.keys.empty() && !all.keys.empty()) {
      // Said once: a hot set that holds none of the keys pushed is almost
      // always one made for other keys (another data set, or `libra profile
      // --keys feature` for `libra train`, which pushes parameter keys).
      LOG(WARNING) << "libra: worker " << ps::Postoffice::Get()->my_rank() << ": none of the "
                   << all.keys.size() << " keys of its first hot push is among the "
                   << hot_set_->size()
                   << " hot keys; the hot set was made for other keys, and every value goes "
                      "to the servers";
    }
    last_pushed_ = epoch;
    ++epochs_hot_;
    hot_values_ += hot.vals.size();
    cold_values_ += cold->vals.size();
    Task task{epoch, {}, pull_back, hot.keys, std::move(done), generation_};
    if (sender_) {
      SendWrittenKeys(epoch, hot.keys);
      task.sent = sender_->Push(epoch, std::span<const ps::Key>(hot.keys.data(), hot.keys.size()),
                                std::span<const float>(hot.vals.data(), hot.vals.size()),
                                std::span<const int>(hot.lens.data(), hot.lens.size()));
    } else {
      SendToServers(epoch, hot.keys, hot.vals);
      ++epochs_to_servers_;
    }
    // An epoch without hot keys still counts on the switch (FIN) or the
    // servers (an empty FALLBACK_PUSH), but nobody waits for it.
    if (hot.keys.empty() && !pull_back) return false;
    AddTask(std::move(task));
    return true;
  }

  bool Pull(const ps::SArray<ps::Key>& keys, ps::SArray<ps::Key>* cold_keys,
            PartDone done) override {
    std::lock_guard<std::mutex> lock(push_mu_);
    if (!hot_set_) {
      *cold_keys = keys;
      return false;
    }
    ps::SArray<ps::Key> hot;
    for (ps::Key key : keys) (hot_set_->IsHot(key) ? hot : *cold_keys).push_back(key);
    if (hot.empty()) return false;
    AddTask(Task{last_pushed_, {}, true, hot, std::move(done), generation_});
    return true;
  }

 private:
  struct Task {
    uint32_t epoch;
    std::shared_future<HotPathStatus> sent;  // invalid for a plain pull or a fallback push
    bool read_replica;
    ps::SArray<ps::Key> keys;
    PartDone done;
    uint32_t generation;  // the hot path's incarnation when it was queued
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
    // A push of millions of keys: size the table once instead of rehashing
    // it at every doubling, and fetch slots ahead of their use.
    if (counts_.size() == 0 && all.keys.size() > 4096) {
      counts_ = libra::hot::HotKeyTable<Sampled>(all.keys.size());
    }
    constexpr size_t kAhead = 8;
    for (size_t i = 0; i < all.keys.size(); ++i) {
      if (i + kAhead < all.keys.size()) counts_.Prefetch(all.keys[i + kAhead]);
      Sampled& s = counts_.FindOrInsert(all.keys[i], Sampled{});
      ++s.updates;
      s.value_len = static_cast<uint32_t>(LengthOf(all, i));
    }
    for (float v : all.vals) max_abs_ = std::max(max_abs_, std::fabs(v));
  }

  // The most keys the controller can choose: one cell each, the switch's
  // cells (or LIBRA_CAPACITY's, if fewer).
  uint64_t MostHotKeys() const {
    const uint64_t cells = libra::hot::SwitchLayoutFor(libra::dataplane::PipelineProfile::Tofino1(),
                                                       ps::Postoffice::Get()->num_workers())
                               .capacity();
    return Config().capacity_cells > 0 ? std::min(cells, Config().capacity_cells) : cells;
  }

  void Join(const Parts& all, uint32_t epoch) {
    joined_ = true;
    for (float v : all.vals) max_abs_ = std::max(max_abs_, std::fabs(v));
    JoinRequest join;
    join.epoch = epoch;
    join.role = JoinRequest::Role::kWorker;
    join.rank = static_cast<uint32_t>(ps::Postoffice::Get()->my_rank());
    join.address = node_->ReserveUdpEndpoint();
    join.max_abs_value = max_abs_;
    std::vector<KeyCount> counted;
    counts_.ForEach([&](ps::Key key, const Sampled& s) {
      counted.push_back({key, s.value_len, s.updates, 0});
    });
    counts_.Clear();
    keys_counted_ = counted.size();
    join.counts = HeaviestCounts(std::move(counted), MostHotKeys());
    keys_sent_ = join.counts.size();
    ps::SArray<ps::Key> keys;
    for (const KeyCount& c : join.counts) keys.push_back(c.key);
    const std::vector<uint32_t> servers = server_of_(keys);
    for (size_t i = 0; i < join.counts.size(); ++i) join.counts[i].server = servers[i];
    Install install = node_->JoinAndWait(join);
    if (!install.enabled) return;  // the controller logged why
    hot_set_ = install.hot_set;
    key_owners_ =
        HotKeyOwners(*install.hot_set, install.owners, ps::Postoffice::Get()->GetServerKeyRanges());
    sender_options_.worker_id = static_cast<uint16_t>(join.rank);
    sender_options_.switch_address = Config().switch_data;
    sender_options_.local = join.address;
    sender_options_.key_owners.assign(key_owners_.begin(), key_owners_.end());
    sender_options_.update_key = install.update_key;
    key_position_ = libra::hotpath::OwnedKeyPositions(*hot_set_, key_owners_, &keys_of_server_);
    StartSender(install.job_id, install.first_epoch, 0);
    LOG(INFO) << "libra: worker " << join.rank << " on the hot path from epoch "
              << install.first_epoch << " (" << hot_set_->size() << " hot keys)";
  }

  // A sender for switch job `job_id` from `first_epoch` on (the install, or
  // a RESUME), on the address the controller listed for this worker.
  void StartSender(uint32_t job_id, uint32_t first_epoch, uint32_t generation) {
    // The failed incarnation's sender must have closed that address; a read
    // that still used it lets go within kReplicaPollSlice.
    const auto give_up = Clock::now() + kRetireBudget;
    while (!retired_sender_.expired() && Clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    libra::hotpath::HotSenderOptions options = sender_options_;
    options.job_id = job_id;
    options.first_epoch = first_epoch;
    sender_ = std::make_shared<libra::hotpath::HotSender>(hot_set_, options);
    sender_->OnReplicaGap([this](const libra::hotpath::ReplicaGap& gap) {
      {
        std::lock_guard<std::mutex> lock(watch_mu_);
        gaps_.push_back(gap);
      }
      watch_cond_.notify_all();
    });
    sender_first_epoch_ = first_epoch;
    if (generation != generation_) {
      ++resumes_;
      LOG(INFO) << "libra: worker " << sender_options_.worker_id
                << " back on the switch from epoch " << first_epoch;
    }
    generation_ = generation;
    fallback_ = false;
    resume_.reset();
  }

  // The switch of incarnation `generation` stopped answering: every epoch
  // it may not have delivered goes to the servers, and so do later ones
  // until a RESUME. `report`: this worker found it (else the controller
  // said so).
  void FallBack(uint32_t generation, uint32_t epoch, const std::string& why, bool report) {
    std::shared_ptr<libra::hotpath::HotSender> retired;
    {
      std::lock_guard<std::mutex> lock(push_mu_);
      if (resume_ && generation == resume_->generation) resume_.reset();  // failed again
      if (generation != generation_ || fallback_ || !sender_) return;
      fallback_ = true;
      ++fallbacks_;
      retired = std::move(sender_);
      retired_sender_ = retired;
      // What the servers may not have applied: every epoch the sender still
      // keeps (it lets go of an epoch once its replica is complete, which
      // the servers publish only after applying it).
      const std::vector<libra::hotpath::RetainedPush> pushes = retired->RetainedPushes();
      for (const libra::hotpath::RetainedPush& push : pushes) {
        SendToServers(push.epoch, push.keys, push.vals);
        ++epochs_resent_;
      }
      LOG(WARNING) << "libra: worker " << sender_options_.worker_id << ": " << why
                   << "; its hot keys go through the servers"
                   << (pushes.empty()
                           ? std::string()
                           : " (resending epochs " + std::to_string(pushes.front().epoch) + "-" +
                                 std::to_string(pushes.back().epoch) + ")");
      if (report) node_->ReportSwitchDown(SwitchDown{generation, epoch, why});
    }
    retired.reset();  // closes its socket, unless a read still holds it
  }

  // RESUME_QUERY: this worker's next epoch, from which it holds its pushes.
  uint32_t HoldForResume() {
    std::lock_guard<std::mutex> lock(push_mu_);
    hold_from_ = next_epoch_;
    return next_epoch_;
  }

  void OnResume(const Resume& resume) {
    {
      std::lock_guard<std::mutex> lock(push_mu_);
      hold_from_.reset();
      if (resume.job_id != 0 && resume.generation > generation_) resume_ = resume;
    }
    resume_cond_.notify_all();
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

  // VALUES: this worker's values of `ask.keys` in epoch `ask.epoch`, from
  // the sender (it keeps an epoch until its replica has it) or from the
  // epochs it last sent to the servers.
  FallbackPush ValuesOf(const Repair& ask) {
    std::lock_guard<std::mutex> lock(push_mu_);
    FallbackPush out;
    out.worker = sender_options_.worker_id;
    out.epoch = FallbackPush::kNotRetained;
    std::optional<libra::hotpath::RetainedPush> kept;
    if (sender_) kept = sender_->Retained(ask.epoch);
    for (const libra::hotpath::RetainedPush& push : sent_to_servers_) {
      if (!kept && push.epoch == ask.epoch) kept = push;
    }
    if (!kept) return out;
    out.epoch = ask.epoch;
    const std::unordered_set<ps::Key> wanted(ask.keys.begin(), ask.keys.end());
    size_t offset = 0;
    for (size_t i = 0; i < kept->keys.size(); ++i) {
      const size_t len = static_cast<size_t>(kept->lens[i]);
      if (wanted.count(kept->keys[i]) != 0) {
        out.keys.push_back(kept->keys[i]);
        out.vals.insert(out.vals.end(), kept->vals.begin() + offset,
                        kept->vals.begin() + offset + len);
      }
      offset += len;
    }
    return out;
  }

  // One epoch's hot values to the servers, each its own keys (every server
  // gets one, maybe empty: it counts the workers).
  void SendToServers(uint32_t epoch, std::span<const ps::Key> keys, std::span<const float> vals) {
    std::vector<FallbackPush> pushes(ps::Postoffice::Get()->num_servers());
    for (FallbackPush& push : pushes) {
      push.epoch = epoch;
      push.worker = sender_options_.worker_id;
    }
    size_t offset = 0;
    for (ps::Key key : keys) {
      const uint32_t index = hot_set_->Find(key);
      const uint32_t len = hot_set_->keys()[index].value_len;
      FallbackPush& push = pushes.at(key_owners_[index]);
      push.keys.push_back(key);
      push.vals.insert(push.vals.end(), vals.begin() + offset, vals.begin() + offset + len);
      offset += len;
    }
    for (size_t s = 0; s < pushes.size(); ++s) {
      node_->SendFallbackPush(static_cast<int>(s), pushes[s]);
    }
    // Kept a while for a server that asks for saturated keys' values.
    libra::hotpath::RetainedPush kept;
    kept.epoch = epoch;
    kept.keys.assign(keys.begin(), keys.end());
    kept.vals.assign(vals.begin(), vals.end());
    for (ps::Key key : keys) {
      kept.lens.push_back(static_cast<int>(hot_set_->keys()[hot_set_->Find(key)].value_len));
    }
    sent_to_servers_.push_back(std::move(kept));
    if (sent_to_servers_.size() > kEpochsKeptAfterSending) sent_to_servers_.pop_front();
  }

  // Tells every server that owns hot keys which of them this epoch's hot
  // push carries (WRITTEN_KEYS), so that it reads only their cells; sent
  // before the values, so it is ahead of the cold ones.
  void SendWrittenKeys(uint32_t epoch, const ps::SArray<ps::Key>& hot_keys) {
    std::vector<std::vector<uint32_t>> positions(keys_of_server_.size());
    for (ps::Key key : hot_keys) {
      const uint32_t index = hot_set_->Find(key);
      positions[key_owners_[index]].push_back(key_position_[index]);
    }
    for (size_t s = 0; s < positions.size(); ++s) {
      if (keys_of_server_[s] == 0) continue;
      // A push's keys ascend, and so do their positions; a caller's unsorted
      // push (PS-lite asks for sorted keys but does not check) is sorted here.
      if (!std::is_sorted(positions[s].begin(), positions[s].end())) {
        std::sort(positions[s].begin(), positions[s].end());
      }
      positions[s].erase(std::unique(positions[s].begin(), positions[s].end()), positions[s].end());
      WrittenKeys report;
      report.epoch = epoch;
      report.worker = sender_options_.worker_id;
      report.key_set = libra::hotpath::EncodeKeySet(positions[s], keys_of_server_[s]);
      node_->SendWrittenKeys(static_cast<int>(s), report);
    }
  }

  // The switch of this incarnation, or null when the keys of `epoch` go
  // through the servers.
  std::shared_ptr<libra::hotpath::HotSender> SenderFor(uint32_t epoch, uint32_t* generation) {
    std::lock_guard<std::mutex> lock(push_mu_);
    *generation = generation_;
    if (fallback_ || !sender_ || epoch < sender_first_epoch_) return nullptr;
    return sender_;
  }

  void CompleteInOrder() {
    std::optional<Task> task;
    while (true) {
      tasks_.WaitAndPop(&task);
      if (!task) return;
      if (task->sent.valid()) {
        const HotPathStatus status = task->sent.get();
        if (status != HotPathStatus::kOk) {
          FallBack(task->generation, task->epoch,
                   "the switch did not take epoch " + std::to_string(task->epoch) + " (" +
                       std::string(libra::hotpath::HotPathStatusName(status)) + ")",
                   true);
        }
      }
      Parts values;
      if (task->read_replica) values = Read(task->epoch, task->keys);
      task->done(std::move(values));
      std::lock_guard<std::mutex> lock(drain_mu_);
      --tasks_pending_;
      drained_.notify_all();
    }
  }

  // The values of hot `keys` as of `epoch`: from the replica while the
  // switch is up, else from the servers.
  Parts Read(uint32_t epoch, const ps::SArray<ps::Key>& keys) {
    while (true) {
      uint32_t generation = 0;
      std::shared_ptr<libra::hotpath::HotSender> sender = SenderFor(epoch, &generation);
      if (!sender) return ReadFromServers(epoch, keys);
      std::optional<Parts> values = ReadReplica(*sender, generation, epoch, keys);
      if (values) return std::move(*values);
    }
  }

  // Asks the servers for `keys` as of `epoch` (each answers once it has
  // applied it); no keys: just waits until every server has.
  Parts ReadFromServers(uint32_t epoch, const ps::SArray<ps::Key>& keys) {
    Repair request;
    request.epoch = epoch;
    request.keys.assign(keys.begin(), keys.end());
    std::unordered_map<ps::Key, std::pair<const Repair*, size_t>> found;
    const std::vector<Repair> answers = node_->RequestRepair(request);
    for (const Repair& answer : answers) {
      size_t offset = 0;
      for (ps::Key key : answer.keys) {
        found[key] = {&answer, offset};
        offset += hot_set_->keys()[hot_set_->Find(key)].value_len;
      }
    }
    Parts out;
    out.keys = keys;
    for (ps::Key key : keys) {
      const int len = static_cast<int>(hot_set_->keys()[hot_set_->Find(key)].value_len);
      auto it = found.find(key);
      CHECK(it != found.end()) << "libra: no server answered for hot key " << key << " of epoch "
                               << epoch;
      const auto [answer, offset] = it->second;
      CHECK_LE(offset + len, answer->vals.size()) << "libra: a short answer for hot key " << key;
      for (int v = 0; v < len; ++v) out.vals.push_back(answer->vals[offset + v]);
      out.lens.push_back(len);
    }
    reads_from_servers_ += 1;
    return out;
  }

  // Waits until the replica of `keys` has reached `epoch`; a switch silent
  // for kSilentReplicaTimeout is probed (dead: the worker falls back), and
  // after kRepairAfter the servers are asked for what they published (a
  // REPLICA lost). nullopt when the worker fell back meanwhile.
  std::optional<Parts> ReadReplica(libra::hotpath::HotSender& sender, uint32_t generation,
                                   uint32_t epoch, const ps::SArray<ps::Key>& keys) {
    Parts out;
    out.keys = keys;
    std::vector<float> vals;
    std::vector<int> lens;
    const auto deadline = Clock::now() + kReplicaDeadline;
    auto next_probe = Clock::now() + kSilentReplicaTimeout;
    auto next_repair = Clock::now() + kRepairAfter;
    while (sender.Pull(std::span<const ps::Key>(keys.data(), keys.size()), &vals, &lens,
                       kReplicaPollSlice) != HotPathStatus::kOk) {
      if (fallback_) return std::nullopt;
      if (Clock::now() < next_probe) continue;
      CHECK(Clock::now() < deadline)
          << "libra: the hot parameters did not reach the last pushed epoch within "
          << kReplicaDeadline.count() << " s (a server stopped)";
      // A switch that died after taking this worker's last push leaves
      // nothing else to notice: ask it.
      if (!sender.ProbeSwitch(kProbeBudget)) {
        FallBack(generation, epoch,
                 "the switch does not answer probes (switch_unresponsive) while epoch " +
                     std::to_string(epoch) + " is being aggregated",
                 true);
        return std::nullopt;
      }
      next_probe = Clock::now() + kSilentReplicaTimeout;
      vals.clear();
      lens.clear();
      if (Clock::now() < next_repair) continue;
      next_repair = Clock::now() + kRepairAfter;
      Repair request;
      request.epoch = epoch;
      request.keys.assign(keys.begin(), keys.end());
      for (const Repair& answer : node_->RequestRepair(request)) {
        sender.RepairReplica(answer.epoch, answer.keys, answer.vals);
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
      // gap, and must never wait for push_mu_.
      lock.unlock();
      {
        std::lock_guard<std::mutex> push_lock(push_mu_);
        if (sender_ && !fallback_ && last_pushed_ > sender_first_epoch_) {
          const std::optional<uint32_t> reached = sender_->ReplicaEpoch();
          if (!reached || *reached + 1 < last_pushed_) {
            wanted = reached ? *reached + 1 : sender_first_epoch_;
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
    uint32_t generation = 0;
    std::shared_ptr<libra::hotpath::HotSender> sender = SenderFor(request.epoch, &generation);
    if (!sender) return;  // fallen back: reads go to the servers anyway
    const auto asked = Clock::now();
    for (const Repair& answer : node_->RequestRepair(request)) {
      sender->RepairReplica(answer.epoch, answer.keys, answer.vals);
      repaired_values_ += answer.vals.size();
    }
    repair_micros_ += static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - asked).count());
    ++repairs_;
  }

  // Waits until the servers have applied every epoch this worker pushed
  // (the replica reached it, or the servers say so), so a job's last update
  // is in before Finalize.
  void Drain() {
    {
      std::unique_lock<std::mutex> lock(drain_mu_);
      drained_.wait(lock, [this] { return tasks_pending_ == 0; });
    }
    const auto start = Clock::now();
    auto next_probe = start + kSilentReplicaTimeout;
    auto next_repair = start + kRepairAfter;
    while (true) {
      uint32_t last = 0;
      {
        std::lock_guard<std::mutex> lock(push_mu_);
        if (!hot_set_ || epochs_hot_ == 0) return;
        last = last_pushed_;
      }
      uint32_t generation = 0;
      std::shared_ptr<libra::hotpath::HotSender> sender = SenderFor(last, &generation);
      if (!sender) {
        ReadFromServers(last, {});
        return;
      }
      const std::optional<uint32_t> reached = sender->ReplicaEpoch();
      if (reached && *reached >= last) return;
      if (Clock::now() > start + kReplicaDeadline) {
        LOG(WARNING) << "libra: the replica did not reach epoch " << last << " before Finalize";
        return;
      }
      if (Clock::now() > next_probe) {
        if (!sender->ProbeSwitch(kProbeBudget)) {
          FallBack(generation, last,
                   "the switch does not answer probes (switch_unresponsive) while epoch " +
                       std::to_string(last) + " is being aggregated",
                   true);
          continue;
        }
        next_probe = Clock::now() + kSilentReplicaTimeout;
      }
      if (Clock::now() > next_repair) {  // the last epoch's REPLICAs were lost
        RepairAll(last);
        next_repair = Clock::now() + kRepairAfter;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  nlohmann::json Report() {
    std::lock_guard<std::mutex> lock(push_mu_);
    nlohmann::json out = {{"role", "worker"},
                          {"sampled_keys", {{"counted", keys_counted_}, {"sent", keys_sent_}}},
                          {"epochs_hot", epochs_hot_},
                          {"hot_values_pushed", hot_values_},
                          {"cold_values_pushed", cold_values_},
                          {"replica_repairs", repairs_.load()},
                          {"repair_micros", repair_micros_.load()},
                          {"repaired_values", repaired_values_.load()},
                          {"fallback",
                           {{"fallbacks", fallbacks_},
                            {"resumes", resumes_},
                            {"epochs_resent", epochs_resent_},
                            {"epochs_to_servers", epochs_to_servers_},
                            {"reads_from_servers", reads_from_servers_.load()}}}};
    if (!hot_set_) return out;
    out["hot_keys"] = hot_set_->size();
    out["hot_values"] = hot_set_->num_values();
    if (!sender_) return out;
    const libra::hotpath::HotSenderCounters c = sender_->counters();
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
                     {"forged_replicas", c.forged_replicas},
                     {"replica_gaps", c.replica_gaps},
                     {"fast_retransmissions", c.fast_retransmissions},
                     {"replica_holes_by_order", c.replica_holes_by_order},
                     {"replica_epochs", c.replica_epochs},
                     {"replica_values", c.replica_values},
                     {"data_micros", c.data_micros},
                     {"pull_wait_micros", c.pull_wait_micros},
                     {"malformed_packets", c.malformed_packets},
                     {"ignored_packets", c.ignored_packets},
                     {"foreign_packets", c.foreign_packets}};
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

  // Lock order (outermost first): push_mu_, then the sender's own lock (its
  // Push), then watch_mu_ (the sender's I/O thread reports a replica gap
  // under it); push_mu_, then drain_mu_ (Push queues a task). WatchReplica
  // and Drain let go of watch_mu_ and drain_mu_ before they take push_mu_.
  std::mutex push_mu_;  // epochs are numbered and handed to the sender in call order
  uint32_t next_epoch_ = 0;
  uint64_t epochs_pushed_ = 0;  // by this process (a resumed job starts at resume_epoch)
  bool joined_ = false;
  uint32_t last_pushed_ = 0;
  libra::hot::HotKeyTable<Sampled> counts_;
  uint64_t keys_counted_ = 0, keys_sent_ = 0;  // distinct keys sampled; of them in the JOIN
  float max_abs_ = 0;
  std::shared_ptr<const libra::hot::HotSet> hot_set_;  // null: the plain path
  std::vector<uint32_t> key_owners_;                   // server of each hot key (hot-set order)
  std::vector<uint32_t> key_position_;    // hot key -> its position among its server's keys
  std::vector<uint32_t> keys_of_server_;  // per server: how many hot keys it owns
  libra::hotpath::HotSenderOptions sender_options_;  // all but the job and the first epoch
  // The switch's side: null while the switch is down (fallback_).
  std::shared_ptr<libra::hotpath::HotSender> sender_;
  uint32_t sender_first_epoch_ = 0;
  std::weak_ptr<libra::hotpath::HotSender> retired_sender_;
  uint32_t generation_ = 0;  // the hot path's incarnation (one per RESUME)
  std::atomic<bool> fallback_{false};
  std::optional<uint32_t> hold_from_;  // RESUME_QUERY answered: no push from this epoch
  std::optional<Resume> resume_;       // back on the switch at resume_->first_epoch
  std::deque<libra::hotpath::RetainedPush> sent_to_servers_;  // the last epochs, for VALUES
  std::condition_variable resume_cond_;
  uint64_t epochs_hot_ = 0, hot_values_ = 0, cold_values_ = 0;
  uint64_t fallbacks_ = 0, resumes_ = 0, epochs_resent_ = 0, epochs_to_servers_ = 0;
  std::atomic<uint64_t> repairs_{0}, repaired_values_{0}, reads_from_servers_{0};
  std::atomic<uint64_t> repair_micros_{0};  // asking the servers for a gap's values, summed

  ps::ThreadsafeQueue<std::optional<Task>> tasks_;
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

void ResumeWorkerAtEpoch(uint32_t epoch) { resume_epoch.store(epoch); }

std::unique_ptr<ps::WorkerHotPath> MakeWorkerPath(ps::WorkerHotPath::ServerOf server_of) {
  return std::make_unique<WorkerPathImpl>(std::move(server_of));
}

}  // namespace libra::hotpath
