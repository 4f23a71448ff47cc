#include "hotpath/server/server_path.h"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "hotpath/node/epoch_trace.h"
#include "hotpath/node/hot_path_node.h"
#include "hotpath/server/fallback_aggregator.h"
#include "hotpath/server/hot_collector.h"
#include "hotpath/server/published_values.h"
#include "hotpath/server/saturated_sums.h"
#include "hotpath/server/switch_sum_check.h"
#include "ps/internal/logging.h"
#include "ps/internal/postoffice.h"

namespace libra::hotpath {
namespace {

using libra::hotpath::CollectedEpoch;
using libra::hotpath::HotPathStatus;

// The server's side of the hot path. Each epoch's sums of the hot keys this
// server owns come from the switch (HotCollector) or, while the switch is
// down, from the workers' FALLBACK_PUSHes summed here (FallbackAggregator),
// whichever completes the epoch first: both give the same bits. Epochs are
// applied strictly in order, each once.
class ServerPathImpl;

// A server's KVServer of app 0 is customer 0 (a server's customer id is its
// app id): its bridge registers with the node under that id.
constexpr int kCustomer = 0;

// The process's server bridge, for WaitUntilHotApplied.
std::mutex live_mu;
ServerPathImpl* live = nullptr;

class ServerPathImpl final : public ps::ServerHotPath {
 public:
  explicit ServerPathImpl(Handle handle) : handle_(std::move(handle)) {
    HotPathNode* node = HotPathNode::Get();
    node->SetReport(kCustomer, [this] { return Report(); });
    dispatcher_ = std::thread([this] { DispatchInOrder(); });
    node->SetRepairHandler(
        [this](const ps::SimpleData& request, Repair repair) { OnRepair(request, repair); });
    node->SetPacketRepairHandler([this](const ps::SimpleData& request, PacketRepair repair) {
      OnPacketRepair(request, std::move(repair));
    });
    HotPathNode::SwitchEvents events;
    events.switch_down = [this](const SwitchDown& down) {
      FallBack(down.generation, "the controller says so");
    };
    events.fallback_push = [this](const FallbackPush& push) { OnFallbackPush(push); };
    events.resume = [this](const Resume& resume) { OnResume(resume); };
    events.written_keys = [this](const WrittenKeys& keys) { OnWrittenKeys(keys); };
    node->SetSwitchEvents(kCustomer, std::move(events));
    node->OnServerInstall([this](const Install& install, libra::UdpEndpoint local) {
      StartCollecting(install, local);
    });
    std::lock_guard<std::mutex> lock(live_mu);
    live = this;
  }

  ~ServerPathImpl() override {
    {
      std::lock_guard<std::mutex> lock(live_mu);
      if (live == this) live = nullptr;
    }
    HotPathNode::Get()->OnServerInstall(nullptr);
    HotPathNode::Get()->SetSwitchEvents(kCustomer, {});
    HotPathNode::Get()->SetRepairHandler(nullptr);
    HotPathNode::Get()->SetPacketRepairHandler(nullptr);
    // Its last figures stay in the node's report (gathered after training).
    HotPathNode::Get()->SetReport(kCustomer, [last = Report()] { return last; });
    std::unique_ptr<libra::hotpath::HotCollector> collector;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
      collector = std::move(collector_);  // no more epochs
    }
    // Before the collector's thread is joined: it may be applying an epoch.
    answered_.notify_all();
    ready_cond_.notify_all();
    applied_cond_.notify_all();
    collector.reset();
    dispatcher_.join();
  }

  void OnResponse(int timestamp, const ps::SArray<float>& vals) override {
    std::lock_guard<std::mutex> lock(mu_);
    responses_[timestamp] = vals;
    answered_.notify_all();
  }

  void WaitApplied(uint32_t epoch) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!aggregator_ || epoch < install_.first_epoch) return;  // nothing hot here then
    applied_cond_.wait(lock, [&] {
      return stopping_ || (applied_through_.has_value() && *applied_through_ >= epoch);
    });
  }

 private:
  void StartCollecting(const Install& install, libra::UdpEndpoint local) {
    if (!install.enabled) return;
    const int rank = ps::Postoffice::Get()->my_rank();
    const std::vector<uint32_t> owners =
        HotKeyOwners(*install.hot_set, install.owners, ps::Postoffice::Get()->GetServerKeyRanges());
    std::vector<libra::hot::Key> owned;
    const auto keys = install.hot_set->keys();
    for (size_t i = 0; i < keys.size(); ++i) {
      if (owners[i] == static_cast<uint32_t>(rank)) owned.push_back(keys[i].key);
    }
    std::sort(owned.begin(), owned.end());
    std::lock_guard<std::mutex> lock(mu_);
    install_ = install;
    local_ = local;
    hot_set_ = install.hot_set;
    published_.Reset(*hot_set_, owned);
    owned_keys_.CopyFrom(owned.data(), owned.size());
    owned_lens_.CopyFrom(published_.lens().data(), published_.lens().size());
    next_apply_ = install.first_epoch;
    if (owned.empty() || stopping_) return;
    aggregator_ = std::make_unique<libra::hotpath::FallbackAggregator>(
        install.hot_set, owned, install.num_workers, install.scale_bits);
    sum_check_ = std::make_unique<SwitchSumCheck>(install.hot_set, install.num_workers,
                                                  install.update_key, install.scale_bits);
    StartCollectorLocked(install.job_id, install.first_epoch);
  }

  // A collector for the switch job `job_id` from `first_epoch` on; its first
  // epoch publishes every owned value (a resumed replica starts empty).
  void StartCollectorLocked(uint32_t job_id, uint32_t first_epoch) {
    libra::hotpath::HotCollectorOptions options;
    options.job_id = job_id;
    options.server_id = static_cast<uint16_t>(ps::Postoffice::Get()->my_rank());
    options.switch_address = Config().switch_data;
    options.local = local_;
    options.socket = HotPathNode::Get()->ReservedSocket(local_);
    options.segmentation = Config().udp_segmentation;
    options.num_workers = install_.num_workers;
    options.scale_bits = install_.scale_bits;
    options.first_epoch = first_epoch;
    options.collect_by_row = true;
    options.written_keys_grace = kWrittenKeysGrace;
    options.update_key = install_.update_key;
    collector_ = std::make_unique<libra::hotpath::HotCollector>(
        install_.hot_set, published_.keys(), options,
        [this](CollectedEpoch epoch) { Deliver(std::move(epoch)); });
    publish_all_from_ = first_epoch;
    for (const WrittenKeys& keys : early_reports_) {
      collector_->AddWrittenKeys(keys.epoch, keys.worker, keys.key_set);
      sum_check_->AddTerm(keys.epoch, keys.worker, keys.sum_term);  // a repeat is ignored
    }
    ready_cond_.notify_all();
    early_reports_.clear();
  }

  // A worker's written keys: for the collector, or kept until it exists (a
  // worker may push its first hot epoch before this server has its INSTALL);
  // its term for the check of the switch's sums.
  void OnWrittenKeys(const WrittenKeys& keys) {
    std::lock_guard<std::mutex> lock(mu_);
    if (sum_check_ && sum_check_->AddTerm(keys.epoch, keys.worker, keys.sum_term) &&
        check_waits_for_terms_) {
      ready_cond_.notify_all();  // (not otherwise: a needless wake-up of the dispatcher)
    }
    if (collector_) {
      collector_->AddWrittenKeys(keys.epoch, keys.worker, keys.key_set);
    } else if (early_reports_.size() < kMaxEarlyReports && !stopping_) {
      early_reports_.push_back(keys);
    }
  }

  // An epoch from the collector (its I/O thread) or the fallback aggregator.
  //
  // The next epoch from the switch is checked and applied right here, on
  // the collector's thread, when that needs no wait (every worker's term is
  // in) and no other thread is applying: handing it to the dispatcher cost a
  // thread wake-up, 0.1-0.15 ms on the path that every worker's next
  // iteration waits for. Nothing else needs the collector meanwhile: under
  // BSP the next epoch's packets come only after this one is published.
  void Deliver(CollectedEpoch epoch) {
    // Only the collector's epochs are applied here, and only when no other
    // thread is applying (try: the collector never waits for the dispatcher).
    std::unique_lock<std::mutex> applying(apply_mu_, std::defer_lock);
    if (epoch.from_switch && epoch.status == HotPathStatus::kOk) applying.try_lock();
    std::unique_lock<std::mutex> lock(mu_);
    if (epoch.status != HotPathStatus::kOk) {
      collector_failed_ = true;  // the dispatcher falls back (it may stop the collector)
      failed_epoch_ = epoch.epoch;
    } else if (epoch.epoch >= next_apply_) {
      const uint32_t delivered = epoch.epoch;
      ready_.emplace(delivered, std::move(epoch));
      if (applying.owns_lock() && CanApplyHereLocked(delivered)) {
        ++taken_by_collector_;
        CollectedEpoch next = TakeNextLocked();
        lock.unlock();
        CheckAndApply(std::move(next));
        // The fallback may have delivered the next epoch meanwhile, and the
        // dispatcher, woken then, found it not yet next: wake it again.
        lock.lock();
        if (ready_.count(next_apply_) > 0) ready_cond_.notify_all();
        return;
      }
    }
    ready_cond_.notify_all();
  }

  // Whether `epoch` is the next to apply and its check needs no wait.
  bool CanApplyHereLocked(uint32_t epoch) const {
    return !stopping_ && !collector_failed_ && !fallback_ && epoch == next_apply_ && sum_check_ &&
           sum_check_->HasAllTerms(epoch);
  }

  // The next epoch to apply, out of ready_ (which holds it).
  CollectedEpoch TakeNextLocked() {
    auto it = ready_.find(next_apply_);
    CollectedEpoch epoch = std::move(it->second);
    ready_.erase(it);
    TraceEpoch("dispatched", ps::Postoffice::Get()->my_rank(), epoch.epoch);
    return epoch;
  }

  // Checks `epoch`, the next in order, and applies it (under apply_mu_);
  // false when stopping.
  bool CheckAndApply(CollectedEpoch epoch) {
    // Sums from the switch are checked first; the check may wait for the
    // workers' terms, and the fallback may deliver the epoch meanwhile.
    if (epoch.from_switch && !CheckSwitchSums(&epoch)) return true;
    TraceEpoch("checked", ps::Postoffice::Get()->my_rank(), epoch.epoch);
    {
      std::lock_guard<std::mutex> lock(mu_);
      aggregator_->Forget(next_apply_);
      ++next_apply_;
      // A second delivery of an epoch now applied (the fallback's, while
      // the switch's was checked) is dropped.
      ready_.erase(ready_.begin(), ready_.lower_bound(next_apply_));
    }
    return Apply(std::move(epoch));
  }

  // The switch is down: stop collecting from it; the workers' fallback pushes
  // complete the epochs from the first one not applied.
  void FallBack(uint32_t generation, const std::string& why) {
    // The collector must be gone (its socket closed) before a RESUME binds
    // the address again.
    std::lock_guard<std::mutex> switching(switching_mu_);
    std::unique_ptr<libra::hotpath::HotCollector> collector;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (generation != generation_ || fallback_ || !aggregator_) return;
      fallback_ = true;
      ++fallbacks_;
      collector = std::move(collector_);
      LOG(WARNING) << "libra: server " << ps::Postoffice::Get()->my_rank()
                   << " sums the hot keys itself from epoch " << next_apply_ << " (" << why << ")";
    }
    collector.reset();  // joins its I/O thread, which may be delivering
  }

  void OnFallbackPush(const FallbackPush& push) {
    std::optional<CollectedEpoch> done;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!aggregator_ || push.epoch < next_apply_) {
        ++fallback_pushes_late_;  // applied already (the switch had it)
        return;
      }
      std::string error;
      done = aggregator_->Add(push.epoch, push.worker, push.keys, push.vals, &error);
      if (!error.empty()) {
        ++fallback_pushes_refused_;
        LOG(ERROR) << "libra: refused a fallback push of worker " << push.worker << " for epoch "
                   << push.epoch << ": " << error;
        return;
      }
      ++fallback_pushes_;
    }
    if (done) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        ++fallback_epochs_;
      }
      Deliver(std::move(*done));
    }
  }

  void OnResume(const Resume& resume) {
    std::lock_guard<std::mutex> switching(switching_mu_);
    std::lock_guard<std::mutex> lock(mu_);
    if (resume.job_id == 0 || resume.generation <= generation_ || stopping_) return;
    generation_ = resume.generation;
    fallback_ = false;
    collector_failed_ = false;
    if (!aggregator_) return;  // owns no hot keys
    ++resumes_;
    LOG(INFO) << "libra: server " << ps::Postoffice::Get()->my_rank()
              << " collects from the switch again from epoch " << resume.first_epoch;
    StartCollectorLocked(resume.job_id, resume.first_epoch);
  }

  // Each epoch's sums into the handle, in epoch order, then the new values
  // out to the switch (while it is up) and to waiting repairs: those Deliver
  // does not apply itself.
  void DispatchInOrder() {
    pthread_setname_np(pthread_self(), "hot-dispatch");
    while (true) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        ready_cond_.wait(lock, [this] {
          return stopping_ || collector_failed_ || ready_.count(next_apply_) > 0;
        });
        if (stopping_) return;
        if (collector_failed_ && !fallback_) {
          const uint32_t generation = generation_;
          const uint32_t failed = failed_epoch_;
          collector_failed_ = false;
          lock.unlock();
          HotPathNode::Get()->ReportSwitchDown(
              SwitchDown{generation, failed, "a server's COLLECTs went unanswered"});
          FallBack(generation,
                   "its COLLECTs of epoch " + std::to_string(failed) + " went unanswered");
          continue;
        }
        collector_failed_ = false;
      }
      // apply_mu_ before mu_, as Deliver takes them; the epoch may have
      // been applied there meanwhile.
      std::lock_guard<std::mutex> applying(apply_mu_);
      CollectedEpoch epoch;
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (stopping_) return;
        if (ready_.count(next_apply_) == 0) continue;
        ++taken_by_dispatcher_;
        epoch = TakeNextLocked();
      }
      if (!CheckAndApply(std::move(epoch))) return;
    }
  }

  // Pushes one epoch's sums into the handle and publishes the new values;
  // false when stopping.
  bool Apply(CollectedEpoch epoch) {
    if (ps::Postoffice::Get()->verbose() >= 1) {
      LOG(INFO) << "libra: collected epoch " << epoch.epoch << ": " << epoch.keys.size()
                << " keys, first sum " << (epoch.vals.empty() ? 0.f : epoch.vals[0]);
    }
    // (Those from the switch were checked, and their saturated sums made
    // exact, by CheckSwitchSums.)
    if (!epoch.from_switch && !epoch.saturated_keys.empty()) SumSaturatedExactly(&epoch);
    // Only the keys pushed this epoch changed: the handle is asked for
    // those, and they go out and update the copy kept for repairs. The first
    // epoch (or one after the copy was lost) asks for every owned key, and a
    // collector's first epoch publishes them all, which gives the workers'
    // replicas their first value of every key.
    Request push;
    push.push = true;
    // Asked with the push itself (PS-lite's PushPull) where a handle answers
    // that: it saves a request on the path that every worker's next
    // iteration waits for. (A handle that answers only the push is asked
    // with a pull from then on.)
    push.pull = !PublishesWhole(epoch.epoch) && handle_answers_push_pull_;
    push.num_merged = static_cast<int>(epoch.num_merged);
    push.keys.CopyFrom(epoch.keys.data(), epoch.keys.size());
    push.vals.CopyFrom(epoch.vals.data(), epoch.vals.size());
    push.lens.CopyFrom(epoch.lens.data(), epoch.lens.size());
    const auto applying = std::chrono::steady_clock::now();
    std::optional<ps::SArray<float>> values = Call(push);
    if (!values) return false;
    TraceEpoch("applied", ps::Postoffice::Get()->my_rank(), epoch.epoch);
    // Decided again after the push: a fallback or a RESUME meanwhile may
    // have made this epoch publish every key.
    const bool whole = PublishesWhole(epoch.epoch);
    size_t asked_values = push.vals.size();
    const bool pulled = whole || !push.pull || values->size() != asked_values;
    if (pulled) {
      if (push.pull && !whole) {
        LOG(INFO) << "libra: the request handle answered a push that asked for values with "
                  << values->size() << " values, not " << asked_values
                  << "; the hot keys' values are pulled after each push from now on";
        handle_answers_push_pull_ = false;
      }
      Request pull;
      pull.pull = true;
      if (whole) {
        pull.keys = owned_keys_;
        pull.lens = owned_lens_;
        asked_values = published_.num_values();
      } else {
        pull.keys = push.keys;
        pull.lens = push.lens;
      }
      values = Call(pull);
      if (!values) return false;
    }
    std::lock_guard<std::mutex> lock(mu_);
    ++(pulled ? values_pulled_ : values_with_push_);
    if (values->size() != asked_values) {
      LOG(ERROR) << "libra: the request handle answered the hot keys' pull with " << values->size()
                 << " values, not " << asked_values << "; epoch " << epoch.epoch
                 << " not replicated";
      published_.Clear();  // no longer current: the next epoch asks for every key
      return true;
    }
    const std::span<const float> published(values->data(), values->size());
    if (whole) {
      published_.SetAll(published);
    } else {
      // The collector's entries, or (an epoch summed here) a lookup, kept
      // in the epoch for its publication below.
      published_.Update(hot_set_->EntriesOf(epoch.keys, epoch.entries, &epoch.entries), epoch.lens,
                        published);
    }
    apply_micros_ += static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                               std::chrono::steady_clock::now() - applying)
                                               .count());
    if (collector_ && !fallback_ && epoch.epoch >= publish_all_from_) {
      const bool all = epoch.epoch == publish_all_from_;
      const std::span<const libra::hot::Key> keys =
          all ? std::span<const libra::hot::Key>(owned_keys_.data(), owned_keys_.size())
              : std::span<const libra::hot::Key>(epoch.keys);
      collector_->PublishUpdate(epoch.epoch, keys,
                                std::span<const float>(values->data(), values->size()),
                                all ? std::span<const libra::hot::HotSet::Entry>() : epoch.entries);
    }
    TraceEpoch("published", ps::Postoffice::Get()->my_rank(), epoch.epoch);
    ++epochs_applied_;
    applied_through_ = epoch.epoch;
    if (sum_check_) sum_check_->Forget(epoch.epoch);
    applied_cond_.notify_all();
    // Kept to answer REPAIRs of workers that lost some of the REPLICAs, and
    // every hot pull while the switch is down.
    published_epoch_ = epoch.epoch;
    AnswerWaitingRepairs();
    return true;
  }

  // An epoch's sums from the switch are checked against the workers' terms
  // before they are applied (switch_sum_check.h): the sums its floats do
  // not fix are taken from the workers' own values (one VALUES round, only
  // when there are such sums), and an epoch that then disagrees with the
  // terms (a DATA or RESULT forged on the data path) is summed whole from
  // the workers' values. Either way the sums are those an honest switch
  // gives, bit for bit.
  //
  // The check waits for every worker's term: an epoch can come complete
  // before some worker pushed it only if RESULTs were forged, and such a
  // worker's values are not there to sum until it pushes (its WRITTEN_KEYS,
  // with the term, leave just before its DATA), or, if it pushes to the
  // servers instead (the switch found down meanwhile), until the fallback
  // sums deliver the epoch: then those are applied, and this returns false
  // (as it does when stopping). True: apply `epoch`.
  bool CheckSwitchSums(CollectedEpoch* epoch) {
    std::vector<libra::hot::Key> from_values;
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (!sum_check_->HasAllTerms(epoch->epoch)) {
        ++epochs_waiting_for_terms_;
        check_waits_for_terms_ = true;
        ready_cond_.wait(lock, [&] {
          return stopping_ || sum_check_->HasAllTerms(epoch->epoch) ||
                 ready_.count(epoch->epoch) > 0;
        });
        check_waits_for_terms_ = false;
        if (stopping_ || !sum_check_->HasAllTerms(epoch->epoch)) return false;
      }
      from_values = sum_check_->KeysToSumFromValues(*epoch);
    }
    std::vector<FallbackPush> answers;
    if (!from_values.empty()) {
      std::optional<std::vector<FallbackPush>> asked = AskEveryWorker(epoch->epoch, from_values);
      if (!asked) {
        LOG(ERROR) << "libra: epoch " << epoch->epoch << "'s sums from the switch cannot be "
                   << "checked (not every worker still has its values): applied unchecked";
        std::lock_guard<std::mutex> lock(mu_);
        ++sums_unchecked_;
        saturated_clamped_ += epoch->saturated_keys.size();
        return true;
      }
      answers = std::move(*asked);
    }
    bool agrees;
    {
      std::lock_guard<std::mutex> lock(mu_);
      agrees = sum_check_->Check(epoch, from_values, answers);
      keys_summed_from_values_ += from_values.size();
      if (agrees) ++epochs_checked_;
    }
    if (!agrees) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        ++epochs_disagreeing_;
      }
      LOG(WARNING) << "libra: server " << ps::Postoffice::Get()->my_rank() << ": the switch's sums "
                   << "of epoch " << epoch->epoch << " disagree with the workers' check (a DATA or "
                   << "RESULT forged on the data path?): summed from the workers' values";
      if (!SumFromValues(epoch, &answers)) return true;
    }
    if (!epoch->saturated_keys.empty()) SumSaturatedFrom(answers, epoch);
    return true;
  }

  // Replaces `epoch` with the sums of every worker's values of every owned
  // key, with the switch's arithmetic (`answers` gets the values); false,
  // leaving `epoch`, when not every worker still has them.
  bool SumFromValues(CollectedEpoch* epoch, std::vector<FallbackPush>* answers) {
    std::optional<CollectedEpoch> summed;
    if (std::optional<std::vector<FallbackPush>> asked =
            AskEveryWorker(epoch->epoch, published_.keys())) {
      *answers = std::move(*asked);
      libra::hotpath::FallbackAggregator aggregator(hot_set_, published_.keys(),
                                                    install_.num_workers, install_.scale_bits);
      for (const FallbackPush& answer : *answers) {
        summed = aggregator.Add(epoch->epoch, answer.worker, answer.keys, answer.vals);
      }
    }
    if (!summed) {
      LOG(ERROR) << "libra: epoch " << epoch->epoch << "'s sums cannot be made from the workers' "
                 << "values (not every worker still has them): applied as the switch sent them";
      std::lock_guard<std::mutex> lock(mu_);
      ++sums_unchecked_;
      return false;
    }
    *epoch = std::move(*summed);
    return true;
  }

  // The switch (or the fallback, with the switch's arithmetic) clamped the
  // sums of `epoch->saturated_keys`: they are summed again from the
  // workers' own values (saturated_sums.h). If a worker no longer has them,
  // the clamped sums stay, with a warning.
  void SumSaturatedExactly(CollectedEpoch* epoch) {
    const std::optional<std::vector<FallbackPush>> answers =
        AskEveryWorker(epoch->epoch, epoch->saturated_keys);
    if (!answers) {
      LOG(WARNING) << "libra: " << epoch->saturated_keys.size() << " hot sums saturated in epoch "
                   << epoch->epoch << " and not every worker still has its values: applied clamped";
      std::lock_guard<std::mutex> lock(mu_);
      saturated_clamped_ += epoch->saturated_keys.size();
      return;
    }
    SumSaturatedFrom(*answers, epoch);
  }

  // Every worker's own values of `keys` in `epoch` (VALUES; a worker keeps
  // an epoch until its replica has it, which is after this server publishes
  // it); nullopt when some worker no longer has them. Waits for the answers:
  // not under mu_.
  std::optional<std::vector<FallbackPush>> AskEveryWorker(
      uint32_t epoch, const std::vector<libra::hot::Key>& keys) {
    Repair ask;
    ask.epoch = epoch;
    ask.keys = keys;
    std::vector<FallbackPush> answers = HotPathNode::Get()->RequestWorkerValues(ask);
    if (!EveryWorkerAnswered(answers, install_.num_workers)) return std::nullopt;
    return answers;
  }

  // The exact sums of `epoch->saturated_keys` from every worker's `answers`.
  void SumSaturatedFrom(const std::vector<FallbackPush>& answers, CollectedEpoch* epoch) {
    const uint64_t wide =
        libra::hotpath::SumSaturatedExactly(*hot_set_, install_.scale_bits, answers, epoch);
    LOG(WARNING) << "libra: " << epoch->saturated_keys.size() << " hot sums saturated in epoch "
                 << epoch->epoch << "; summed exactly from the workers' values"
                 << (wide == 0 ? std::string()
                               : " (" + std::to_string(wide) +
                                     " beyond 64 bits at the job's scale, in double precision)");
    std::lock_guard<std::mutex> lock(mu_);
    saturated_exact_ += epoch->saturated_keys.size();
    saturated_wide_ += wide;
  }

  // A worker's replica lacks values of `repair.epoch`: answer with what this
  // server published, once it has published that epoch. A server without
  // hot keys answers at once, empty.
  void OnRepair(const ps::SimpleData& request, const Repair& repair) {
    std::lock_guard<std::mutex> lock(mu_);
    waiting_repairs_.emplace_back(request, repair);
    AnswerWaitingRepairs();
  }

  // A worker lost REPLICAs of this server's stream of `repair.epoch`:
  // answer with the UPDATE packets it names, as the collector sent them,
  // once this server has published that epoch (none once the collector no
  // longer keeps it, or without a collector).
  void OnPacketRepair(const ps::SimpleData& request, PacketRepair repair) {
    std::lock_guard<std::mutex> lock(mu_);
    waiting_packet_repairs_.push_back(
        {request, std::move(repair), std::chrono::steady_clock::now()});
    AnswerWaitingRepairs();
  }

  void AnswerWaitingRepairs() {
    for (auto it = waiting_repairs_.begin(); it != waiting_repairs_.end();) {
      const auto& [request, repair] = *it;
      const bool has_keys = aggregator_ != nullptr;
      if (has_keys && (!published_epoch_ || *published_epoch_ < repair.epoch)) {
        ++it;
        continue;
      }
      Repair answer;
      answer.epoch = published_epoch_.value_or(repair.epoch);
      published_.Fill(repair.keys, &answer);
      HotPathNode::Get()->AnswerRepair(request, answer);
      ++repairs_answered_;
      it = waiting_repairs_.erase(it);
    }
    for (auto it = waiting_packet_repairs_.begin(); it != waiting_packet_repairs_.end();) {
      const auto& [request, repair, since] = *it;
      if (collector_ && (!published_epoch_ || *published_epoch_ < repair.epoch)) {
        ++it;
        continue;
      }
      PacketRepair answer;
      answer.epoch = repair.epoch;
      if (collector_) {
        answer.packets = collector_->PublishedPackets(repair.epoch, repair.seqs, repair.tail_from);
      }
      HotPathNode::Get()->AnswerPacketRepair(request, answer);
      ++packet_repairs_answered_;
      packet_repair_wait_micros_ +=
          static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                    std::chrono::steady_clock::now() - since)
                                    .count());
      it = waiting_packet_repairs_.erase(it);
    }
  }

  // Whether the values published after `epoch` are those of every owned
  // key (the copy kept for repairs is not current, or a collector's first
  // epoch) rather than those of the keys pushed.
  bool PublishesWhole(uint32_t epoch) {
    std::lock_guard<std::mutex> lock(mu_);
    return !published_.current() || (collector_ && !fallback_ && epoch == publish_all_from_);
  }

  // Runs the handle and waits for its Response; nullopt when stopping.
  std::optional<ps::SArray<float>> Call(Request request) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      request.timestamp = next_timestamp_++;
    }
    handle_(request);
    std::unique_lock<std::mutex> lock(mu_);
    answered_.wait(lock, [&] { return stopping_ || responses_.count(request.timestamp) > 0; });
    if (stopping_) return std::nullopt;
    ps::SArray<float> vals = responses_[request.timestamp];
    responses_.erase(request.timestamp);
    return vals;
  }

  nlohmann::json Report() {
    std::lock_guard<std::mutex> lock(mu_);
    nlohmann::json out = {
        {"role", "server"},
        {"epochs_collected", epochs_applied_},
        {"owned_hot_keys", owned_keys_.size()},
        {"repairs_answered", repairs_answered_},
        {"packet_repairs_answered", packet_repairs_answered_},
        {"packet_repair_wait_micros", packet_repair_wait_micros_},
        {"apply_micros", apply_micros_},
        {"values_with_push", values_with_push_},
        {"values_pulled", values_pulled_},
        {"epochs_taken_by",
         {{"collector", taken_by_collector_}, {"dispatcher", taken_by_dispatcher_}}},
        {"fallback",
         {{"fallbacks", fallbacks_},
          {"resumes", resumes_},
          {"epochs_summed_here", fallback_epochs_},
          {"pushes", fallback_pushes_},
          {"pushes_already_applied", fallback_pushes_late_},
          {"pushes_refused", fallback_pushes_refused_}}},
        {"sum_check",
         {{"epochs_checked", epochs_checked_},
          {"keys_summed_from_values", keys_summed_from_values_},
          {"epochs_disagreeing", epochs_disagreeing_},
          {"epochs_waiting_for_terms", epochs_waiting_for_terms_},
          {"epochs_unchecked", sums_unchecked_}}},
        {"saturated_keys_summed_exactly", saturated_exact_},
        {"saturated_values_left_clamped", saturated_clamped_},
        {"saturated_values_summed_in_double", saturated_wide_}};
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
                        {"row_collect_packets", c.row_collect_packets},
                        {"retransmissions", c.retransmissions},
                        {"fast_retransmissions", c.fast_retransmissions},
                        {"timeouts", c.timeouts},
                        {"duplicate_results", c.duplicate_results},
                        {"results", c.results},
                        {"written_values", c.written_values},
                        {"collect_micros", c.collect_micros},
                        {"by_row", collector_->collects_by_row()},
                        {"key_reports", c.key_reports},
                        {"key_reports_ignored", c.key_reports_ignored},
                        {"epochs_by_written_keys", c.epochs_by_written_keys},
                        {"packets_saved", c.packets_saved},
                        {"epochs_without_key_reports", c.epochs_without_key_reports},
                        {"saturated_values", c.saturated_values},
                        {"update_window", collector_->update_window()},
                        {"update_packets", c.update_packets},
                        {"update_acks", c.update_acks},
                        {"update_retransmissions", c.update_retransmissions},
                        {"update_fast_retransmissions", c.update_fast_retransmissions},
                        {"update_tail_copies", c.update_tail_copies},
                        {"repair_packets_answered", c.repair_packets_answered},
                        {"updates_abandoned", c.updates_abandoned},
                        {"packets_sent", c.packets_sent},
                        {"bytes_sent", c.bytes_sent},
                        {"packets_received", c.packets_received},
                        {"bytes_received", c.bytes_received},
                        {"malformed_packets", c.malformed_packets},
                        {"ignored_packets", c.ignored_packets},
                        {"foreign_packets", c.foreign_packets}};
    return out;
  }

  Handle handle_;
  // Lock order: switching_mu_, then mu_ (a change of path takes both);
  // live_mu (the process's bridge, for WaitUntilServerApplied) is taken alone.
  std::mutex switching_mu_;  // one change between the switch and the fallback at a time
  std::mutex mu_;
  std::condition_variable answered_;
  bool stopping_ = false;
  Install install_;
  libra::UdpEndpoint local_;
  std::shared_ptr<const libra::hot::HotSet> hot_set_;
  PublishedValues published_;  // the owned keys, and the values last published
  // published_'s keys and lengths as the handle's pull of every owned key
  // takes them.
  ps::SArray<libra::hot::Key> owned_keys_;
  ps::SArray<int> owned_lens_;

  // Where the epochs come from: the switch, or the workers while it is down.
  std::unique_ptr<libra::hotpath::HotCollector> collector_;
  // How long a collector waits after READY for the workers' WRITTEN_KEYS
  // (they leave with the workers' pushes, ahead of their cold values) before
  // it reads every cell instead.
  static constexpr std::chrono::milliseconds kWrittenKeysGrace{250};
  static constexpr size_t kMaxEarlyReports = 4096;
  std::vector<WrittenKeys> early_reports_;                          // before the collector exists
  std::unique_ptr<libra::hotpath::FallbackAggregator> aggregator_;  // null: no hot keys
  std::unique_ptr<SwitchSumCheck> sum_check_;                       // with aggregator_
  uint32_t generation_ = 0;  // the hot path's incarnation (one per RESUME)
  bool fallback_ = false;
  bool collector_failed_ = false;  // set by Deliver, handled by the dispatcher
  uint32_t failed_epoch_ = 0;
  uint32_t publish_all_from_ = 0;  // the current collector's first epoch

  // Epochs ready to apply, and the next one to apply.
  std::map<uint32_t, CollectedEpoch> ready_;
  uint32_t next_apply_ = 0;
  std::condition_variable ready_cond_;
  // Held while an epoch is checked and applied (by the dispatcher, or by
  // Deliver on the collector's thread), taken before mu_.
  std::mutex apply_mu_;
  std::optional<uint32_t> applied_through_;  // the last epoch the handle has applied
  std::condition_variable applied_cond_;

  std::map<int, ps::SArray<float>> responses_;
  int next_timestamp_ = 0;
  // Whether the request handle answers a push that asks for values (the
  // dispatcher's; cleared the first time it does not).
  bool handle_answers_push_pull_ = true;
  uint64_t epochs_applied_ = 0;
  std::optional<uint32_t> published_epoch_;
  std::list<std::pair<ps::SimpleData, Repair>> waiting_repairs_;
  // A worker's request for lost UPDATE packets, answered once the epoch is
  // published; `since` it came, for the report's wait.
  struct WaitingPacketRepair {
    ps::SimpleData request;
    PacketRepair repair;
    std::chrono::steady_clock::time_point since;
  };
  std::list<WaitingPacketRepair> waiting_packet_repairs_;
  uint64_t repairs_answered_ = 0;
  uint64_t packet_repairs_answered_ = 0;
  uint64_t packet_repair_wait_micros_ = 0;  // from a request's arrival to its answer, summed
  uint64_t apply_micros_ = 0;               // the handle's push and pull of each epoch, summed
  // Epochs whose new values came back with the push, and those pulled after it.
  uint64_t values_with_push_ = 0, values_pulled_ = 0;
  // Epochs checked and applied on the collector's thread (Deliver), and by
  // the dispatcher.
  uint64_t taken_by_collector_ = 0, taken_by_dispatcher_ = 0;
  uint64_t fallbacks_ = 0, resumes_ = 0, fallback_epochs_ = 0, fallback_pushes_ = 0;
  uint64_t fallback_pushes_late_ = 0, fallback_pushes_refused_ = 0;
  uint64_t saturated_exact_ = 0, saturated_clamped_ = 0, saturated_wide_ = 0;
  uint64_t epochs_checked_ = 0, keys_summed_from_values_ = 0, epochs_disagreeing_ = 0;
  uint64_t epochs_waiting_for_terms_ = 0, sums_unchecked_ = 0;
  bool check_waits_for_terms_ = false;  // a check waits in CheckSwitchSums for a term
  std::thread dispatcher_;
};

}  // namespace

void WaitUntilServerApplied(uint32_t epoch) {
  // Not under live_mu while waiting: the bridge lives until Finalize, after
  // every checkpoint.
  ServerPathImpl* path = nullptr;
  {
    std::lock_guard<std::mutex> lock(live_mu);
    path = live;
  }
  if (path != nullptr) path->WaitApplied(epoch);
}

std::unique_ptr<ps::ServerHotPath> MakeServerPath(ps::ServerHotPath::Handle handle) {
  return std::make_unique<ServerPathImpl>(std::move(handle));
}

}  // namespace libra::hotpath
