#include "hotpath/worker/worker_path.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <future>
#include <mutex>
#include <optional>
#include <thread>

#include "hot/hot_set.h"
#include "hot/hot_switch_layout.h"
#include "hotpath/node/epoch_trace.h"
#include "hotpath/node/hot_path_node.h"
#include "hotpath/worker/hot_key_routes.h"
#include "hotpath/worker/hot_sender.h"
#include "hotpath/worker/hot_split.h"
#include "hotpath/worker/key_sampler.h"
#include "hotpath/worker/replica_lag.h"
#include "hotpath/worker/retained_values.h"
#include "hotpath/worker/sampled_counts.h"
#include "hotpath/worker/server_answers.h"
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

// How often a read waiting for the replica looks whether the worker fell
// back meanwhile (then the servers answer it instead).
constexpr std::chrono::milliseconds kReplicaPollSlice{100};

// How long a resumed hot path waits for the failed incarnation's sender to
// let go of the UDP address the new one binds.
constexpr std::chrono::seconds kRetireBudget{5};

// ResumeAtEpoch's epoch, taken by the worker path at its first push.
std::atomic<uint32_t> resume_epoch{0};

// Whether this job's hot-set file (LIBRA_HOT_SET, no sampling) holds no keys
// as this worker reads it. The controller, reading the same file, can then
// only keep the job plain, so the worker need not wait for its INSTALL at
// the first epoch (a JOIN's round trip, tens of milliseconds that a short
// job on fast links notices). False when this worker cannot read the file:
// then it waits, as for any set.
bool HotSetFileHoldsNoKeys() {
  const HotPathConfig& config = Config();
  if (config.sampling() || !config.install_path.empty()) return false;
  try {
    return libra::hot::ReadHotSetFile(config.hot_set_path).size() == 0;
  } catch (const std::exception&) {
    return false;
  }
}

class WorkerPathImpl final : public ps::WorkerHotPath {
 public:
  WorkerPathImpl(int customer_id, ServerOf server_of)
      : node_(HotPathNode::Get()),
        customer_id_(customer_id),
        first_hot_epoch_(Config().first_hot_epoch()),
        join_epoch_(Config().join_epoch()),
        plain_by_file_(HotSetFileHoldsNoKeys()),
        after_done_(DoneBefore(customer_id)),
        server_of_(std::move(server_of)) {
    if (after_done_) {
      LOG(WARNING) << "libra: worker " << HotPathNode::WorkerRankOf(customer_id)
                   << " made a new KVWorker after its earlier one ended: the hot path served the "
                      "earlier one, and this one runs on the plain parameter server";
    }
    drain_id_ = node_->AddDrain(customer_id_, [this] { Drain(); });
    node_->SetReport(customer_id_, [this] { return Report(); });
    HotPathNode::SwitchEvents events;
    events.switch_down = [this](const SwitchDown& down) {
      FallBack(down.generation, down.epoch, "the controller says the switch is down", false);
    };
    events.resume_query = [this] { return HoldForResume(); };
    events.resume = [this](const Resume& resume) { OnResume(resume); };
    events.values = [this](const Repair& ask) { return ValuesOf(ask); };
    events.worker_done = [this](const WorkerDone& done) { OnWorkerDone(done); };
    events.pad = [this](const WorkerDone& pad) {
      std::lock_guard<std::mutex> lock(done_mu_);
      pad_to_ = std::max(pad_to_, pad.next_epoch);
      done_changed_.notify_all();
    };
    events.all_done = [this] {
      std::lock_guard<std::mutex> lock(done_mu_);
      all_done_ = true;
      done_changed_.notify_all();
    };
    node_->SetSwitchEvents(customer_id_, std::move(events));
    completer_ = std::thread([this] { CompleteInOrder(); });
    watchdog_ = std::thread([this] { WatchReplica(); });
  }

  ~WorkerPathImpl() override {
    // A job that ends between the JOIN and the first hot epoch: the JOIN's
    // thread still uses this path until the INSTALL comes.
    SendPendingScale();
    if (install_coming_.valid()) install_coming_.wait();
    Drain();
    node_->RemoveDrain(drain_id_);
    node_->SetSwitchEvents(customer_id_, {});
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
    // A worker's KVWorker may go before worker 0 gathers the job's report:
    // its last figures stay in the node's report, taken once its threads
    // are done (a repair of the last epoch's replica may still have run).
    node_->SetReport(customer_id_, [last = Report()] { return last; });
    sender_.reset();
  }

  bool Push(const Parts& all, bool pull_back, Parts* cold, PartDone done) override {
    if (after_done_) {
      *cold = all;
      return false;
    }
    std::unique_lock<std::mutex> lock(push_mu_);
    // Between RESUME_QUERY and RESUME the controller picks the epoch the hot
    // path resumes at; this worker pushes nothing from its answer on.
    resume_cond_.wait(lock, [this] { return !hold_from_ || next_epoch_ < *hold_from_; });
    if (epochs_pushed_++ == 0) next_epoch_ = resume_epoch.load();
    const uint32_t epoch = next_epoch_++;
    TraceEpoch("push", static_cast<int>(sender_options_.worker_id), epoch);
    if (epoch < join_epoch_) sampler_.Count(all);
    if (epoch <= join_epoch_) sampler_.NotePushAt(std::chrono::steady_clock::now());
    if (epoch >= join_epoch_ && !joined_) SendJoin(all, epoch, /*scale_follows=*/false);
    if (scale_follows_) {
      // The JOIN went at the first pull, before any value: this push's
      // largest one sets the fixed-point scale.
      scale_follows_ = false;
      sampler_.NoteMagnitudes(all);
      node_->ReportScale(ScaleReport{sender_options_.worker_id, sampler_.max_abs()});
    }
    // An empty hot-set file: the INSTALL, which can only say plain, is
    // taken once it is here rather than waited for.
    if (plain_by_file_ && install_coming_.valid() &&
        install_coming_.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
      TakePlainInstall(install_coming_.get());
    }
    // Plain until the first hot epoch, at which the INSTALL must be here.
    if (!plain_by_file_ && epoch >= first_hot_epoch_ && install_coming_.valid()) {
      // What the sampling phase costs this worker beyond counting: the wait
      // here when the controller's choice is not in yet.
      const auto asked = Clock::now();
      Install install = install_coming_.get();
      install_wait_ = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - asked);
      StartHotPath(install);
    }
    if (!hot_set_) {
      *cold = all;
      return false;
    }
    if (resume_ && epoch == resume_->first_epoch)
      StartSender(resume_->job_id, epoch, resume_->generation);
    Parts hot;
    const std::optional<std::span<const libra::hot::HotSet::Entry>> pulled = pulled_keys_.EntriesOf(
        *hot_set_, std::span<const ps::Key>(all.keys.data(), all.keys.size()));
    std::vector<libra::hot::HotSet::Entry> hot_entries;  // each hot key's, for the sender
    if (pulled) {
      SplitHotAndCold(*pulled, all, &hot, cold, &hot_entries);
    } else {
      SplitHotAndCold(*hot_set_, all, &hot, cold, &hot_entries);
    }
    if (epochs_hot_ == 0 && hot.keys.empty() && !all.keys.empty()) {
      // Said once: a hot set that holds none of the keys pushed is almost
      // always one made for other keys (another data set, or `libra profile
      // --keys feature` for `libra train`, which pushes parameter keys).
      LOG(WARNING) << "libra: worker " << sender_options_.worker_id << ": none of the "
                   << all.keys.size() << " keys of its first hot push is among the "
                   << hot_set_->size()
                   << " hot keys; the hot set was made for other keys, and every value goes "
                      "to the servers";
    }
    last_pushed_ = epoch;
    ++epochs_hot_;
    NoteHotPush(epoch);
    hot_values_ += hot.vals.size();
    cold_values_ += cold->vals.size();
    Task task{epoch,
              {},
              pull_back,
              hot.keys,
              pull_back ? hot_entries : std::vector<libra::hot::HotSet::Entry>{},
              std::move(done),
              generation_};
    if (sender_) {
      SendWrittenKeys(epoch, hot.keys, hot.vals, hot_entries);
      task.sent =
          sender_->Push(epoch, std::span<const ps::Key>(hot.keys.data(), hot.keys.size()),
                        std::span<const float>(hot.vals.data(), hot.vals.size()),
                        std::span<const int>(hot.lens.data(), hot.lens.size()), hot_entries);
    } else {
      SendToServers(epoch, hot.keys, hot.vals);
      ++epochs_to_servers_;
    }
    // An epoch without hot keys still counts on the switch (FIN) or the
    // servers (an empty FALLBACK_PUSH), but nobody waits for it.
    TraceEpoch("packed", static_cast<int>(sender_options_.worker_id), epoch);
    if (hot.keys.empty() && !pull_back) return false;
    AddTask(std::move(task));
    return true;
  }

  bool Pull(const ps::SArray<ps::Key>& keys, ps::SArray<ps::Key>* cold_keys,
            PartDone done) override {
    if (after_done_) {
      *cold_keys = keys;
      return false;
    }
    std::lock_guard<std::mutex> lock(push_mu_);
    if (JoinsAtFirstPull()) {
      // The INSTALL then comes while this pull and the first batch run,
      // not after every worker's first push (what it waits for is the first
      // SCALE, sent at this worker's first push or another's).
      SendJoin(Parts{}, 0, /*scale_follows=*/true);
    }
    if (!hot_set_) {
      *cold_keys = keys;
      return false;
    }
    ps::SArray<ps::Key> hot;
    std::vector<libra::hot::HotSet::Entry> hot_entries;  // so the read looks up nothing
    hot.reserve(keys.size());
    cold_keys->reserve(cold_keys->size() + keys.size());
    const std::span<const libra::hot::HotSet::Entry> entries =
        pulled_keys_.Classify(*hot_set_, std::span<const ps::Key>(keys.data(), keys.size()));
    for (size_t i = 0; i < keys.size(); ++i) {
      if (entries[i].index == libra::hot::HotSet::kCold) {
        cold_keys->push_back(keys[i]);
      } else {
        hot.push_back(keys[i]);
        hot_entries.push_back(entries[i]);
      }
    }
    if (hot.empty()) return false;
    AddTask(
        Task{last_pushed_, {}, true, hot, std::move(hot_entries), std::move(done), generation_});
    return true;
  }

 private:
  struct Task {
    uint32_t epoch;
    std::shared_future<HotPathStatus> sent;  // invalid for a plain pull or a fallback push
    bool read_replica;
    ps::SArray<ps::Key> keys;
    std::vector<libra::hot::HotSet::Entry> entries;  // of a read's keys, in hot_set_
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

  // The most keys the controller can choose: one cell each, the switch's
  // cells (or LIBRA_CAPACITY's, if fewer).
  uint64_t MostHotKeys() const {
    const uint64_t cells = libra::hot::SwitchLayoutFor(libra::dataplane::PipelineProfile::Tofino1(),
                                                       ps::Postoffice::Get()->num_workers())
                               .capacity();
    return Config().capacity_cells > 0 ? std::min(cells, Config().capacity_cells) : cells;
  }

  // A worker that joined at its first pull and never pushed: its SCALE
  // (nothing seen) lets the controller answer the JOINs, which this path's
  // destructor and every other worker's first push wait for.
  void SendPendingScale() {
    std::lock_guard<std::mutex> lock(push_mu_);
    if (!scale_follows_) return;
    scale_follows_ = false;
    node_->ReportScale(ScaleReport{sender_options_.worker_id, 0.0f});
  }

  // This worker pushes no more (its path drains): DONE, once, with the
  // first epoch it has not pushed, so that the controller can ask it to pad
  // the epochs that other workers push after it (PadWhileOthersPush), and,
  // before it joined, answer the others plain.
  void SendDone() {
    const int worker_id = HotPathNode::WorkerIdOf(customer_id_);
    if (worker_id == ps::Node::kEmpty) return;  // no worker of its own: plain
    if (after_done_) return;                    // the earlier KVWorker's path sent it
    WorkerDone done;
    bool joined = false;
    {
      std::lock_guard<std::mutex> lock(push_mu_);
      if (done_sent_) return;
      done_sent_ = true;
      joined = joined_;
      done.rank = static_cast<uint32_t>(ps::Postoffice::IDtoRank(worker_id));
      done.next_epoch = NextEpochLocked();
    }
    const bool sent = node_->ReportDone(done);
    std::lock_guard<std::mutex> lock(done_mu_);
    awaits_all_done_ = sent && joined;
  }

  // Whether an earlier KVWorker of this customer's worker ended (its path
  // sent DONE): the controller counts this worker done, and the switch's
  // epochs went on without it, so a new path cannot join them; it runs
  // plain, as every worker's does once all of them are done. (Customer 0
  // may be made before ps::Start, when no earlier one can have ended.)
  bool DoneBefore(int customer_id) const {
    const int rank = HotPathNode::WorkerRankOf(customer_id);
    return rank >= 0 && node_->DoneSent(static_cast<uint32_t>(rank));
  }

  // Under push_mu_: the next epoch this worker pushes.
  uint32_t NextEpochLocked() const {
    return epochs_pushed_ == 0 ? resume_epoch.load() : next_epoch_;
  }

  // A done worker that joined the hot path waits here until every worker is
  // done, pushing the empty epochs that PAD asks for: each epoch needs every
  // worker's FIN, and an empty one adds nothing, as a worker that has ended
  // adds nothing to PS-lite's sums (docs/hotpath.md, "Epochs"). Workers that
  // push equally often are all done here at about the same time, and wait
  // no longer than Finalize's barrier makes them.
  void PadWhileOthersPush() {
    while (true) {
      uint32_t pad_to = 0;
      {
        std::unique_lock<std::mutex> lock(done_mu_);
        if (!awaits_all_done_) return;
        done_changed_.wait(lock, [this] { return all_done_ || pad_to_ > padded_to_; });
        if (pad_to_ <= padded_to_) return;  // every worker is done
        pad_to = pad_to_;
      }
      while (true) {
        {
          std::lock_guard<std::mutex> lock(push_mu_);
          if (NextEpochLocked() >= pad_to) break;
        }
        Parts cold;  // stays empty: nothing goes to the servers
        Push(Parts{}, false, &cold, [](Parts) {});
      }
      std::lock_guard<std::mutex> lock(done_mu_);
      padded_to_ = std::max(padded_to_, pad_to);
    }
  }

  // Another worker's DONE (the controller forwards every one). On the
  // control plane's thread, which must not wait for push_mu_: a Push may
  // hold it while it waits for the INSTALL that this thread delivers.
  void OnWorkerDone(const WorkerDone& done) {
    const int worker_id = HotPathNode::WorkerIdOf(customer_id_);
    if (worker_id == ps::Node::kEmpty ||
        done.rank == static_cast<uint32_t>(ps::Postoffice::IDtoRank(worker_id))) {
      return;
    }
    std::optional<WorkerDone> past;
    {
      std::lock_guard<std::mutex> lock(done_mu_);
      done_peer_next_ = std::min(done_peer_next_.value_or(done.next_epoch), done.next_epoch);
      past = PastTheEndLocked();
    }
    if (past) node_->ReportPushedPast(*past);
  }

  // Push, under push_mu_: hot epoch `epoch` went out (to the switch, or to
  // the servers in fallback).
  void NoteHotPush(uint32_t epoch) {
    std::optional<WorkerDone> past;
    {
      std::lock_guard<std::mutex> lock(done_mu_);
      last_hot_pushed_ = epoch;
      past = PastTheEndLocked();
    }
    if (past) node_->ReportPushedPast(*past);
  }

  // Under done_mu_: a hot epoch this worker pushed at or after a done
  // worker's end completes only once that worker pads it: PUSHED_PAST, for
  // each such epoch not reported yet (the controller sends the PADs).
  // The rank is the JOIN's (sender_options_.worker_id): a hot epoch was
  // pushed, so this worker joined, and NoteHotPush wrote last_hot_pushed_
  // under done_mu_ after that.
  std::optional<WorkerDone> PastTheEndLocked() {
    if (!done_peer_next_ || !last_hot_pushed_ || *last_hot_pushed_ < *done_peer_next_ ||
        (reported_past_ && *reported_past_ >= *last_hot_pushed_)) {
      return std::nullopt;
    }
    reported_past_ = *last_hot_pushed_;
    return WorkerDone{sender_options_.worker_id, *last_hot_pushed_ + 1};
  }

  // With a hot-set file (no counts to wait for) a worker joins at its first
  // pull, before its first push, so that the controller need not wait for
  // the last worker's push to install the job: the first push of any worker
  // gives the scale (SCALE). Not in a job resumed from a checkpoint (it
  // joins at the epoch it resumes at) nor with an empty file (the worker
  // does not wait for that INSTALL).
  bool JoinsAtFirstPull() const {
    const HotPathConfig& config = Config();
    return !joined_ && epochs_pushed_ == 0 && join_epoch_ == 0 && !config.sampling() &&
           config.install_path.empty() && !plain_by_file_ && resume_epoch.load() == 0;
  }

  // Sends this worker's JOIN: the counts of its sampling phase, made
  // heaviest-first and routed on a thread of their own while the worker
  // goes on pushing plain epochs; install_coming_ holds the answer.
  // `scale_follows`: sent at the first pull, before any value; the first
  // push's SCALE then gives the magnitude (scale_follows_ is set once the
  // JOIN is on its way).
  void SendJoin(const Parts& all, uint32_t epoch, bool scale_follows) {
    joined_ = true;
    // This customer's own worker id (customers as workers: each customer of
    // the process that registered has one; customer 0 of a one-worker
    // process has the process's).
    const int worker_id = HotPathNode::WorkerIdOf(customer_id_);
    if (worker_id == ps::Node::kEmpty) {
      LOG(WARNING) << "libra: customer " << customer_id_
                   << " of this worker process is no worker of its own (it did not call "
                      "ps::Start("
                   << customer_id_
                   << ") before the job started); its pushes stay on the plain parameter server";
      return;
    }
    sampler_.NoteMagnitudes(all);
    JoinRequest join;
    join.epoch = std::max(epoch, first_hot_epoch_);  // the first epoch it pushes hot
    join.role = JoinRequest::Role::kWorker;
    join.rank = static_cast<uint32_t>(ps::Postoffice::IDtoRank(worker_id));
    join.address = node_->ReserveUdpEndpoint();
    join.max_abs_value = sampler_.max_abs();
    join.plain_epoch_seconds = static_cast<float>(sampler_.MedianEpochSeconds());
    join.scale_follows = scale_follows;
    // Who this worker is on the switch, for its sender once installed.
    sender_options_.worker_id = static_cast<uint16_t>(join.rank);
    sender_options_.local = join.address;
    // The counts go with the thread (taking ~100k of them out of the table
    // costs milliseconds); this worker counts no more.
    install_coming_ = std::async(std::launch::async, [this, join = std::move(join),
                                                      sampler = std::move(sampler_)]() mutable {
      join.counted_pairs = sampler.counted_pairs();
      join.counted_values = sampler.counted_values();
      join.counts = sampler.TakeHeaviest(MostHotKeys());
      keys_counted_ = sampler.keys_counted();
      keys_sent_ = join.counts.size();
      ps::SArray<ps::Key> keys;
      keys.reserve(join.counts.size());
      for (const KeyCount& c : join.counts) keys.push_back(c.key);
      const std::vector<uint32_t> servers = server_of_(keys);
      for (size_t i = 0; i < join.counts.size(); ++i) join.counts[i].server = servers[i];
      return node_->JoinAndWait(join);
    });
    sampler_ = KeySampler();  // what the moved one left
    scale_follows_ = scale_follows;
  }

  // The controller's answer to a worker that read its hot-set file as
  // empty and went on plain: plain too, unless the file was rewritten while
  // the job started, which would leave this worker out of the hot path the
  // others run.
  void TakePlainInstall(const Install& install) {
    if (!install.enabled) return;
    LOG(FATAL) << "libra: the hot-set file " << Config().hot_set_path
               << " held no keys when this worker started, but the controller installed "
               << install.hot_set->size() << " keys from it: was it rewritten while the job began?";
  }

  // The controller's answer to this worker's JOIN: the hot path from its
  // first epoch on, or plain for good.
  void StartHotPath(const Install& install) {
    if (!install.enabled) return;  // the controller logged why
    hot_set_ = install.hot_set;
    routes_ = std::make_unique<HotKeyRoutes>(
        install.hot_set,
        HotKeyOwners(*install.hot_set, install.owners, ps::Postoffice::Get()->GetServerKeyRanges()),
        static_cast<uint32_t>(ps::Postoffice::Get()->num_servers()));
    sender_options_.switch_address = Config().switch_data;
    sender_options_.socket = node_->ReservedSocket(sender_options_.local);
    sender_options_.segmentation = Config().udp_segmentation;
    sender_options_.key_owners.assign(routes_->owners().begin(), routes_->owners().end());
    sender_options_.update_key = install.update_key;
    sum_check_.emplace(install.update_key, install.scale_bits);
    scale_bits_ = install.scale_bits;
    StartSender(install.job_id, install.first_epoch, 0);
    LOG(INFO) << "libra: worker " << sender_options_.worker_id << " on the hot path from epoch "
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

  // VALUES: this worker's values of `ask.keys` in epoch `ask.epoch`, from
  // the sender (it keeps an epoch until its replica has it) or from the
  // epochs it last sent to the servers.
  FallbackPush ValuesOf(const Repair& ask) {
    std::lock_guard<std::mutex> lock(push_mu_);
    std::optional<libra::hotpath::RetainedPush> kept;
    if (sender_) kept = sender_->Retained(ask.epoch);
    if (!kept) kept = sent_to_servers_.Find(ask.epoch);
    return ValuesOfKeys(kept ? &*kept : nullptr, sender_options_.worker_id, ask.keys);
  }

  // One epoch's hot values to the servers, each its own keys (every server
  // gets one, maybe empty: it counts the workers).
  void SendToServers(uint32_t epoch, std::span<const ps::Key> keys, std::span<const float> vals) {
    const std::vector<FallbackPush> pushes =
        routes_->SplitByServer(epoch, sender_options_.worker_id, keys, vals);
    for (size_t s = 0; s < pushes.size(); ++s) {
      node_->SendFallbackPush(static_cast<int>(s), pushes[s]);
    }
    // Kept a while for a server that asks for saturated keys' values.
    libra::hotpath::RetainedPush kept;
    kept.epoch = epoch;
    kept.keys.assign(keys.begin(), keys.end());
    kept.vals.assign(vals.begin(), vals.end());
    for (ps::Key key : keys) {
      kept.lens.push_back(static_cast<int>(hot_set_->Lookup(key).value_len));
    }
    sent_to_servers_.Keep(std::move(kept));
  }

  // Tells every server that owns hot keys which of them this epoch's hot
  // push carries (WRITTEN_KEYS), so that it reads only their cells, and the
  // term of their values that checks the switch's sums (sum_check.h); sent
  // before the values, so it is ahead of the cold ones.
  void SendWrittenKeys(uint32_t epoch, const ps::SArray<ps::Key>& hot_keys,
                       const ps::SArray<float>& hot_vals,
                       std::span<const libra::hot::HotSet::Entry> entries) {
    const std::vector<HotKeyRoutes::Report> reports = routes_->WrittenKeysOf(
        epoch, sender_options_.worker_id,
        std::span<const ps::Key>(hot_keys.data(), hot_keys.size()),
        std::span<const float>(hot_vals.data(), hot_vals.size()), *sum_check_, entries);
    for (size_t s = 0; s < reports.size(); ++s) {
      if (reports[s].has_keys) node_->SendWrittenKeys(static_cast<int>(s), reports[s].keys);
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
    pthread_setname_np(pthread_self(), "hot-completer");
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
      if (task->read_replica) {
        values = Read(task->epoch, task->keys, task->entries);
        TraceEpoch("hot_read", static_cast<int>(sender_options_.worker_id), task->epoch);
      }
      const bool read = task->read_replica;
      task->done(std::move(values));
      // The pull's hot part handed over: the caller's wait ends here or
      // when the servers' part comes, whichever is later.
      if (read) TraceEpoch("hot_done", static_cast<int>(sender_options_.worker_id), task->epoch);
      std::lock_guard<std::mutex> lock(drain_mu_);
      --tasks_pending_;
      drained_.notify_all();
    }
  }

  // The values of hot `keys` (their hot-set `entries`) as of `epoch`: from
  // the replica while the switch is up, else from the servers.
  Parts Read(uint32_t epoch, const ps::SArray<ps::Key>& keys,
             const std::vector<libra::hot::HotSet::Entry>& entries) {
    while (true) {
      uint32_t generation = 0;
      std::shared_ptr<libra::hotpath::HotSender> sender = SenderFor(epoch, &generation);
      if (!sender) return ReadFromServers(epoch, keys);
      std::optional<Parts> values = ReadReplica(*sender, generation, epoch, keys, entries);
      if (values) return std::move(*values);
    }
  }

  // Asks the servers for `keys` as of `epoch` (each answers once it has
  // applied it); no keys: just waits until every server has.
  Parts ReadFromServers(uint32_t epoch, const ps::SArray<ps::Key>& keys) {
    Repair request;
    request.epoch = epoch;
    request.keys.assign(keys.begin(), keys.end());
    Parts out;
    std::string error;
    CHECK(ValuesFromAnswers(*hot_set_, std::span<const ps::Key>(keys.data(), keys.size()),
                            node_->RequestRepair(request), &out, &error))
        << "libra: " << error << " of epoch " << epoch;
    reads_from_servers_ += 1;
    return out;
  }

  // Waits until the replica of `keys` has reached `epoch`; a switch silent
  // for kSilentReplicaTimeout is probed (dead: the worker falls back), and
  // after kRepairAfter the servers are asked for what they published (a
  // REPLICA lost). nullopt when the worker fell back meanwhile.
  std::optional<Parts> ReadReplica(libra::hotpath::HotSender& sender, uint32_t generation,
                                   uint32_t epoch, const ps::SArray<ps::Key>& keys,
                                   const std::vector<libra::hot::HotSet::Entry>& entries) {
    Parts out;
    out.keys = keys;
    std::vector<float> vals;
    std::vector<int> lens;
    const auto deadline = Clock::now() + kReplicaDeadline;
    auto next_probe = Clock::now() + kSilentReplicaTimeout;
    auto next_repair = Clock::now() + kRepairAfter;
    while (sender.Pull(std::span<const ps::Key>(keys.data(), keys.size()), entries, &vals, &lens,
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

  // Repairs what the sender reports as gaps, and the whole replica when it
  // lags (replica_lag.h).
  void WatchReplica() {
    pthread_setname_np(pthread_self(), "hot-watchdog");
    ReplicaLag lag(kRepairAfter);
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
        RepairGap(std::move(gap));
        lock.lock();
      }
      std::optional<uint32_t> lagging;
      // Not under watch_mu_: the sender's I/O thread takes it to report a
      // gap, and must never wait for push_mu_.
      lock.unlock();
      {
        std::lock_guard<std::mutex> push_lock(push_mu_);
        if (sender_ && !fallback_) {
          lagging =
              ReplicaLag::LaggingEpoch(sender_->ReplicaEpoch(), last_pushed_, sender_first_epoch_);
        }
      }
      lock.lock();
      if (stopping_) return;
      const std::optional<uint32_t> repair = lag.Observe(Clock::now(), lagging);
      if (!repair) continue;
      lock.unlock();
      RepairAll(*repair);
      lock.lock();
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

  // A gap: first the lost packets, from the servers that sent them (a few
  // UPDATEs over ZeroMQ); what they leave missing (a server that no longer
  // keeps the epoch's stream, a loss the replica cannot name), by value.
  void RepairGap(libra::hotpath::ReplicaGap gap) {
    uint32_t generation = 0;
    std::shared_ptr<libra::hotpath::HotSender> sender = SenderFor(gap.epoch, &generation);
    if (!sender) return;  // fallen back: reads go to the servers anyway
    TraceEpoch("repair_start", static_cast<int>(sender_options_.worker_id), gap.epoch);
    // Filled while the report waited here (a server's own resend of an
    // UPDATE lost on its way to the switch): nothing to ask.
    if (sender->MissingReplicaKeys(gap.epoch).empty()) return;
    if (!gap.streams.empty()) {
      const auto asked = Clock::now();
      std::vector<std::pair<int, PacketRepair>> requests;
      for (const libra::hotpath::StreamLoss& loss : gap.streams) {
        PacketRepair request;
        request.epoch = loss.epoch;
        request.seqs = loss.seqs;
        request.tail_from = loss.tail_from;
        requests.emplace_back(loss.server, std::move(request));
      }
      packet_repair_requests_ += requests.size();
      for (const PacketRepair& answer : node_->RequestPackets(requests)) {
        repair_packets_ += sender->ApplyRepairPackets(answer.packets);
      }
      packet_repair_micros_ += static_cast<uint64_t>(
          std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - asked).count());
      ++packet_repairs_;
      TraceEpoch("repaired", static_cast<int>(sender_options_.worker_id), gap.epoch);
      gap.keys = sender->MissingReplicaKeys(gap.epoch);
      if (gap.keys.empty()) return;
    }
    Repair request;
    request.epoch = gap.epoch;
    request.keys = std::move(gap.keys);
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
    SendPendingScale();
    SendDone();
    PadWhileOthersPush();
    const auto start = Clock::now();
    auto next_probe = start + kSilentReplicaTimeout;
    auto next_repair = start + kRepairAfter;
    while (true) {
      uint32_t last = 0;
      {
        std::lock_guard<std::mutex> lock(push_mu_);
        if (!hot_set_ || epochs_hot_ == 0) return;
        // Drained already (Finalize did, and the KVWorker's destructor asks
        // again, maybe after the control plane stopped): nothing to wait for.
        if (drained_through_ && *drained_through_ == last_pushed_) return;
        last = last_pushed_;
      }
      uint32_t generation = 0;
      std::shared_ptr<libra::hotpath::HotSender> sender = SenderFor(last, &generation);
      if (!sender) {
        ReadFromServers(last, {});
        MarkDrained(last);
        return;
      }
      const std::optional<uint32_t> reached = sender->ReplicaEpoch();
      if (reached && *reached >= last) {
        MarkDrained(last);
        return;
      }
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

  void MarkDrained(uint32_t epoch) {
    std::lock_guard<std::mutex> lock(push_mu_);
    drained_through_ = epoch;
  }

  nlohmann::json Report() {
    std::lock_guard<std::mutex> lock(push_mu_);
    nlohmann::json out = {
        {"role", "worker"},
        {"sampled_keys", {{"counted", keys_counted_.load()}, {"sent", keys_sent_.load()}}},
        {"install_wait_micros", install_wait_.count()},
        {"epochs_hot", epochs_hot_},
        {"hot_values_pushed", hot_values_},
        {"cold_values_pushed", cold_values_},
        {"replica_repairs", repairs_.load()},
        {"packet_repairs", packet_repairs_.load()},
        {"packet_repair_requests", packet_repair_requests_.load()},
        {"repair_packets", repair_packets_.load()},
        {"packet_repair_micros", packet_repair_micros_.load()},
        {"repair_micros", repair_micros_.load()},
        {"repaired_values", repaired_values_.load()},
        {"fallback",
         {{"fallbacks", fallbacks_},
          {"resumes", resumes_},
          // Told to resume (RESUME came): its next push goes to the switch.
          {"resume_pending", resume_.has_value()},
          {"epochs_resent", epochs_resent_},
          {"epochs_to_servers", epochs_to_servers_},
          {"reads_from_servers", reads_from_servers_.load()}}}};
    if (!hot_set_) return out;
    out["hot_keys"] = hot_set_->size();
    out["hot_values"] = hot_set_->num_values();
    out["scale_bits"] = scale_bits_;  // the switch's fixed point: value x 2^F
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
                     {"late_first_sends", c.late_first_sends},
                     {"packets_sent", c.packets_sent},
                     {"bytes_sent", c.bytes_sent},
                     {"packets_received", c.packets_received},
                     {"bytes_received", c.bytes_received},
                     {"replica_packets", c.replica_packets},
                     {"forged_replicas", c.forged_replicas},
                     {"replica_gaps", c.replica_gaps},
                     {"fast_retransmissions", c.fast_retransmissions},
                     {"replica_holes_by_order", c.replica_holes_by_order},
                     {"repair_packets", c.repair_packets},
                     {"replica_epochs", c.replica_epochs},
                     {"replica_values", c.replica_values},
                     {"data_micros", c.data_micros},
                     {"pull_wait_micros", c.pull_wait_micros},
                     {"malformed_packets", c.malformed_packets},
                     {"ignored_packets", c.ignored_packets},
                     {"foreign_packets", c.foreign_packets}};
    return out;
  }

  HotPathNode* node_;
  const int customer_id_;  // the KVWorker's; its worker id is looked up at the JOIN
  const uint32_t first_hot_epoch_;
  const uint32_t join_epoch_;  // sends its JOIN at its push of this epoch
  const bool plain_by_file_;   // HotSetFileHoldsNoKeys: runs plain without waiting for the INSTALL
  const bool after_done_;      // DoneBefore: an earlier path of this worker ended; plain
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
  bool scale_follows_ = false;  // joined at the first pull: SCALE at the first push
  bool done_sent_ = false;      // DONE sent: this worker pushes no more
  // After push_mu_ in the lock order; the control plane's thread takes only
  // this one (OnWorkerDone).
  std::mutex done_mu_;
  // The smallest next epoch of the other workers that are done, once one is.
  std::optional<uint32_t> done_peer_next_;
  std::optional<uint32_t> last_hot_pushed_;  // the latest hot epoch pushed
  std::optional<uint32_t> reported_past_;    // the latest epoch PUSHED_PAST named
  // Done: wait for ALL_DONE (DONE went, and this worker joined); PAD asks
  // for empty epochs up to pad_to_ (not included), pushed up to padded_to_.
  bool awaits_all_done_ = false;
  bool all_done_ = false;
  uint32_t pad_to_ = 0, padded_to_ = 0;
  std::condition_variable done_changed_;
  std::atomic<uint64_t> keys_counted_{0}, keys_sent_{0};  // sampled, and in the JOIN
  // From the JOIN on until the first hot epoch: what the controller answers.
  std::future<Install> install_coming_;
  uint32_t last_pushed_ = 0;
  KeySampler sampler_;
  // The wait at the first hot epoch for the INSTALL.
  std::chrono::microseconds install_wait_{0};
  std::shared_ptr<const libra::hot::HotSet> hot_set_;  // null: the plain path
  PulledKeys pulled_keys_;  // the last Pull's keys (under push_mu_), for a push of the same keys
  std::unique_ptr<const HotKeyRoutes> routes_;       // set with hot_set_
  libra::hotpath::HotSenderOptions sender_options_;  // all but the job and the first epoch
  std::optional<SumCheck> sum_check_;                // keyed by the install
  int scale_bits_ = 0;                               // the install's F
  // The switch's side: null while the switch is down (fallback_).
  std::shared_ptr<libra::hotpath::HotSender> sender_;
  uint32_t sender_first_epoch_ = 0;
  std::weak_ptr<libra::hotpath::HotSender> retired_sender_;
  uint32_t generation_ = 0;  // the hot path's incarnation (one per RESUME)
  std::atomic<bool> fallback_{false};
  std::optional<uint32_t> hold_from_;        // RESUME_QUERY answered: no push from this epoch
  std::optional<uint32_t> drained_through_;  // Drain saw the servers apply this epoch
  std::optional<Resume> resume_;             // back on the switch at resume_->first_epoch
  RetainedValues sent_to_servers_;           // the last epochs sent to the servers, for VALUES
  std::condition_variable resume_cond_;
  uint64_t epochs_hot_ = 0, hot_values_ = 0, cold_values_ = 0;
  uint64_t fallbacks_ = 0, resumes_ = 0, epochs_resent_ = 0, epochs_to_servers_ = 0;
  std::atomic<uint64_t> repairs_{0}, repaired_values_{0}, reads_from_servers_{0};
  std::atomic<uint64_t> packet_repairs_{0};          // gaps repaired by their lost packets
  std::atomic<uint64_t> packet_repair_requests_{0};  // ... the servers asked (one each, at once)
  std::atomic<uint64_t> repair_packets_{0};          // ... the packets taken
  std::atomic<uint64_t> packet_repair_micros_{0};    // ... asking for them, summed
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

std::unique_ptr<ps::WorkerHotPath> MakeWorkerPath(int customer_id,
                                                  ps::WorkerHotPath::ServerOf server_of) {
  return std::make_unique<WorkerPathImpl>(customer_id, std::move(server_of));
}

}  // namespace libra::hotpath
