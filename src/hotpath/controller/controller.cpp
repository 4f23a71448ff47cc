#include "hotpath/controller/controller.h"

#include <pthread.h>

#include <algorithm>
#include <cmath>
#include <exception>

#include "hot/cost_model.h"
#include "hot/hot_switch_layout.h"
#include "hot/median.h"
#include "hot/placement.h"
#include "hot/sampled_rates.h"
#include "hotpath/controller/join_counts.h"
#include "hotpath/controller/sampled_sums.h"
#include "hotpath/controller/switch_control_client.h"
#include "ps/internal/logging.h"
#include "ps/internal/postoffice.h"
#include "wire/fixed_point.h"
#include "wire/pipeline_profile.h"

namespace libra::hotpath {

Controller::Controller(const HotPathConfig& config, int num_workers, int num_servers)
    : config_(config), num_workers_(num_workers), num_servers_(num_servers) {}

namespace {

// The workers' median epoch while they sampled (the plain path's), in
// seconds; 0 when none of them timed one.
double MedianPlainEpoch(const std::vector<std::pair<ps::SimpleData, JoinRequest>>& joins) {
  std::vector<double> epochs;
  for (const auto& [request, join] : joins) {
    const double seconds = join.plain_epoch_seconds;
    if (join.role == JoinRequest::Role::kWorker && std::isfinite(seconds) && seconds > 0) {
      epochs.push_back(seconds);
    }
  }
  return libra::hot::UpperMedian(std::move(epochs));
}

}  // namespace

int Controller::ChooseScaleBits(uint32_t num_workers, float max_abs) {
  if (!(max_abs > 0) || !std::isfinite(max_abs)) return 16;
  // Largest F with num_workers * max_abs * 2^F * 16 <= 2^31.
  const double room = std::log2(2147483648.0 / (16.0 * num_workers * max_abs));
  // Up to the switch's finest scale, not float32's 24 bits: a value of
  // magnitude 2^-e keeps 24 - e bits at F = 24, and a DeepFM run whose
  // gradients stay below 0.2 ended 3.5e-3 above plain's held-out loss at
  // F = 24 and 1.0e-5 from it at the F = 27 this gives (PERFORMANCE.md).
  return std::clamp(static_cast<int>(std::floor(room)),
                    libra::dataplane::FixedPointCodec::kMinScaleBits,
                    libra::dataplane::FixedPointCodec::kMaxScaleBits);
}

libra::hot::SwitchLayout Controller::Layout() const {
  return libra::hot::SwitchLayoutFor(libra::dataplane::PipelineProfile::Tofino1(), num_workers_);
}

uint64_t Controller::CapacityCells(const libra::hot::SwitchLayout& layout) const {
  return config_.capacity_cells > 0 ? std::min(config_.capacity_cells, layout.capacity())
                                    : layout.capacity();
}

libra::hot::CostInput Controller::CostInputWithoutKeys(double measured_plain_epoch_s,
                                                       double counted_pairs,
                                                       double counted_values) const {
  const libra::hot::SwitchLayout layout = Layout();
  libra::hot::CostInput input;
  input.num_workers = static_cast<uint32_t>(num_workers_);
  input.num_servers = static_cast<uint32_t>(num_servers_);
  input.slots_per_packet = layout.num_arrays;
  input.capacity_values = CapacityCells(layout);
  input.link_bytes_per_s = config_.link_mbit * 1e6 / 8;
  input.shared_cores = config_.shared_cores;
  if (config_.plain_epoch_measured) input.measured_plain_epoch_s = measured_plain_epoch_s;
  // Every push the workers counted (also of keys beyond their JOINs'
  // counts), all of it on the servers until keys are given.
  input.other_pushes_per_epoch = counted_pairs / config_.counted_epochs();
  input.other_values_per_epoch = counted_values / config_.counted_epochs();
  return input;
}

bool Controller::MaySumLater(const JoinRequest& join) const {
  if (!config_.capacity_auto || !config_.sampling()) return false;
  if (join.role != JoinRequest::Role::kWorker) return true;  // no counts
  // This worker's epoch and pushes, as if every worker's were the same.
  const double workers = num_workers_;
  return libra::hot::NoSetCanPay(
             CostInputWithoutKeys(join.plain_epoch_seconds,
                                  workers * static_cast<double>(join.counted_pairs),
                                  workers * static_cast<double>(join.counted_values)))
      .has_value();
}

void Controller::OnJoin(const ps::SimpleData& request, ps::SimpleApp* app) {
  std::optional<JoinRequest> join = DecodeJoinHeader(request.body);
  // Kept to be answered; its body (the counts) goes to counts_.
  ps::SimpleData answer_to = request;
  std::string body = std::move(answer_to.body);
  answer_to.body.clear();
  std::vector<std::pair<ps::SimpleData, JoinRequest>> answered;
  Install install;
  std::optional<Install> plain;
  {
    std::lock_guard<std::mutex> lock(mu_);
    plain = plain_for_good_;
    if (!plain) {
      // Summed now unless they may wait: what is left once the last JOIN
      // comes is what every worker may wait for at the first hot epoch.
      if (!join || !counts_.Add(std::move(body), request.sender, MaySumLater(*join))) {
        LOG(ERROR) << "libra controller: dropped a malformed JOIN from node " << request.sender;
        return;
      }
      joins_.emplace_back(std::move(answer_to), std::move(*join));
      if (!ReadyToDecide()) return;
      install = DecideAndTakeJoins(&answered);
    }
  }
  if (plain) {
    // A worker ended before it joined: plain, as every JOIN before was
    // answered (and logged).
    app->Response(answer_to, Encode(*plain));
    return;
  }
  Answer(install, answered, app);
}

void Controller::OnScale(const ScaleReport& scale) {
  std::vector<std::pair<ps::SimpleData, JoinRequest>> answered;
  Install install;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // The first SCALE sets it, later ones before the choice raise it; one
    // after the choice (every JOIN answered) changes nothing.
    scale_max_abs_ = std::max(scale_max_abs_.value_or(0.0f), scale.max_abs_value);
    if (!ReadyToDecide()) return;
    install = DecideAndTakeJoins(&answered);
  }
  Answer(install, answered, app_);
}

bool Controller::ReadyToDecide() const {
  if (joins_.size() < static_cast<size_t>(num_workers_ + num_servers_)) return false;
  if (scale_max_abs_) return true;
  // Workers that joined at their first pull: the scale waits for the first
  // of their pushes (SCALE), the only values there are.
  return std::none_of(joins_.begin(), joins_.end(),
                      [](const auto& j) { return j.second.scale_follows; });
}

Install Controller::DecideAndTakeJoins(std::vector<std::pair<ps::SimpleData, JoinRequest>>* joins) {
  const auto last_join = std::chrono::steady_clock::now();
  decided_ = true;
  Install install = Decide();
  decide_time_ = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::steady_clock::now() - last_join);
  *joins = std::move(joins_);
  joins_.clear();
  counts_ = {};
  return install;
}

void Controller::Answer(const Install& install,
                        const std::vector<std::pair<ps::SimpleData, JoinRequest>>& joins,
                        ps::SimpleApp* app) {
  if (install.enabled) {
    LOG(INFO) << "libra: hot path on from epoch " << install.first_epoch << ": "
              << install.hot_set->size() << " hot keys, " << install.hot_set->num_values()
              << " values, scale 2^" << install.scale_bits;
  } else {
    LOG(WARNING) << "libra: staying on the plain parameter server: " << install.reason;
  }
  if (app == nullptr) return;  // stopped
  const std::string answer = Encode(install);
  for (const auto& [req, unused] : joins) app->Response(req, answer);
}

std::shared_ptr<const libra::hot::HotSet> Controller::ChooseFromSamples(
    std::vector<uint32_t>* owners, std::string* why) {
  const libra::hot::SwitchLayout layout = Layout();
  const uint64_t capacity = CapacityCells(layout);
  libra::hot::CostInput input;  // LIBRA_CAPACITY=auto: what the cost model prices
  if (config_.capacity_auto) {
    double pairs = 0, values = 0;
    for (const auto& [request, join] : joins_) {
      pairs += static_cast<double>(join.counted_pairs);
      values += static_cast<double>(join.counted_values);
    }
    input = CostInputWithoutKeys(MedianPlainEpoch(joins_), pairs, values);
    if (pairs == 0) {
      *why = "no keys were pushed during the sampling phase";
      return nullptr;
    }
    // Where the hot path's fixed cost alone outweighs what any set could
    // save, the answer needs neither the JOINs' counts nor their ranking
    // (tens of ms on shared cores, which every worker may wait for at the
    // first hot epoch).
    if (std::optional<libra::hot::CostChoice> none = libra::hot::NoSetCanPay(input)) {
      cost_ = none->chosen;
      cost_why_ = none->why;
      LOG(INFO) << "libra: " << none->why;
      *why = none->why;
      return nullptr;
    }
    counts_.SumKept();
  }
  // Each key's updates summed over the workers.
  const std::vector<libra::hot::HotKey>& candidates = counts_.sums().keys;
  const std::vector<uint32_t>& servers = counts_.sums().servers;
  if (candidates.empty()) {
    *why = "no keys were pushed during the sampling phase";
    return nullptr;
  }
  // Each chosen key's place in `candidates` is kept, for its server and
  // its expected count.
  const std::vector<uint32_t> order = RankHeaviestFirst(candidates);
  std::vector<libra::hot::HotKey> ranked;
  ranked.reserve(order.size());
  for (uint32_t place : order) ranked.push_back(candidates[place]);
  std::vector<libra::hot::HotKey> chosen = libra::hot::ChooseRankedHotKeys(ranked, capacity);
  std::vector<uint32_t> place_of_chosen;  // in candidates
  place_of_chosen.reserve(chosen.size());
  for (size_t r = 0, c = 0; c < chosen.size(); ++r) {  // chosen is a subsequence of ranked
    if (ranked[r].key != chosen[c].key) continue;
    place_of_chosen.push_back(order[r]);
    ++c;
  }
  if (chosen.empty()) {
    *why = "no sampled key fits the switch";
    return nullptr;
  }
  if (config_.capacity_auto) {
    // Keep the prefix of the heaviest keys that pays, or none. Priced at
    // what they are expected to cost from now on, not at their sampled
    // counts, which overstate the tail the sample found (sampled_rates.h).
    std::vector<uint64_t> counts;
    counts.reserve(candidates.size());
    for (const libra::hot::HotKey& k : candidates) counts.push_back(k.frequency);
    const std::vector<double> expected = libra::hot::GoodTuringCounts(counts);
    input.keys.reserve(chosen.size());
    for (size_t c = 0; c < chosen.size(); ++c) {
      const libra::hot::HotKey& k = chosen[c];
      const double pushes = expected[place_of_chosen[c]] / config_.counted_epochs();
      input.keys.push_back({k.key, k.value_len, pushes});
      input.other_pushes_per_epoch -= pushes;
      input.other_values_per_epoch -= pushes * k.value_len;
    }
    input.other_pushes_per_epoch = std::max(0.0, input.other_pushes_per_epoch);
    input.other_values_per_epoch = std::max(0.0, input.other_values_per_epoch);
    const libra::hot::CostChoice choice = libra::hot::ChooseByCost(input);
    cost_ = choice.chosen;
    cost_why_ = choice.why;
    LOG(INFO) << "libra: " << choice.why;
    if (choice.chosen.keys == 0) {
      *why = choice.why;
      return nullptr;
    }
    // ChooseHotKeys and ChooseByCost both order by updates (ties: as given).
    chosen.resize(choice.chosen.keys);
  }
  owners->clear();
  for (size_t c = 0; c < chosen.size(); ++c) owners->push_back(servers[place_of_chosen[c]]);
  return std::make_shared<const libra::hot::HotSet>(
      libra::hot::PlaceHotSet(std::move(chosen), layout, libra::hot::HeatPlacement()));
}

std::shared_ptr<const libra::hot::HotSet> Controller::BandByServer(
    std::shared_ptr<const libra::hot::HotSet> hot_set, const std::vector<uint32_t>& owners) const {
  if (num_servers_ < 2) return hot_set;
  const auto keys = hot_set->keys();
  std::vector<uint32_t> owner_of_key =
      HotKeyOwners(*hot_set, owners, ps::Postoffice::Get()->GetServerKeyRanges());
  try {
    return std::make_shared<const libra::hot::HotSet>(libra::hot::PlaceHotSet(
        std::vector<libra::hot::HotKey>(keys.begin(), keys.end()), hot_set->layout(),
        libra::hot::BandedPlacement(std::move(owner_of_key),
                                    libra::hot::MakePlacement(hot_set->placement()))));
  } catch (const std::invalid_argument& e) {
    LOG(WARNING) << "libra: keeping the hot set's placement (" << e.what()
                 << "); servers will read it cell by cell";
    return hot_set;
  }
}

Install Controller::Decide() {
  Install install;
  install.job_id = config_.job_id;
  // The epoch the workers joined at: the first hot epoch, or, in a job
  // resumed after it, the epoch it resumed at (every worker the same).
  install.first_epoch = config_.first_hot_epoch();
  for (const auto& [req, join] : joins_) {
    if (join.role == JoinRequest::Role::kWorker) {
      install.first_epoch = std::max(install.first_epoch, join.epoch);
    }
  }
  install.num_workers = static_cast<uint32_t>(num_workers_);
  try {
    std::optional<Install> saved;
    if (!config_.install_path.empty()) {
      // A resumed job: the hot set, owners and scale of the job it resumes.
      saved = ReadInstallFile(config_.install_path);
      if (!saved || !saved->enabled) {
        throw std::runtime_error("cannot read the saved INSTALL " + config_.install_path);
      }
      install.hot_set = saved->hot_set;
      install.owners = saved->owners;
      install.scale_bits = saved->scale_bits;
    } else if (config_.sampling()) {
      install.hot_set = ChooseFromSamples(&install.owners, &install.reason);
    } else {
      install.hot_set = std::make_shared<const libra::hot::HotSet>(
          libra::hot::ReadHotSetFile(config_.hot_set_path));
      if (install.hot_set->size() == 0) install.reason = "the hot-set file holds no keys";
    }
    if (install.hot_set == nullptr || install.hot_set->size() == 0) return install;
    if (!saved) {
      install.hot_set = BandByServer(install.hot_set, install.owners);
      float max_abs = scale_max_abs_.value_or(0.0f);
      for (const auto& [req, join] : joins_) max_abs = std::max(max_abs, join.max_abs_value);
      install.scale_bits =
          config_.scale_bits.value_or(ChooseScaleBits(install.num_workers, max_abs));
    }

    libra::SwitchJob job;
    job.job_id = config_.job_id;
    job.token = config_.job_token;
    job.workers.resize(num_workers_);
    job.servers.resize(num_servers_);
    for (const auto& [req, join] : joins_) {
      auto& list = join.role == JoinRequest::Role::kWorker ? job.workers : job.servers;
      if (join.rank >= list.size()) throw std::runtime_error("a JOIN names a rank out of range");
      list[join.rank] = join.address;
    }
    // Only the cells in use take switch memory: the highest index bounds them.
    uint32_t cells = 1;
    for (const libra::hot::CellAddress& cell : install.hot_set->cells()) {
      cells = std::max(cells, cell.index + 1);
    }
    job.cells_per_array = cells;
    job.scale_bits = install.scale_bits;
    job.slots_per_packet = static_cast<int>(install.hot_set->layout().num_arrays);
    if (config_.switch_control.empty()) {
      throw std::runtime_error("LIBRA_SWITCH_CONTROL is not set on the scheduler");
    }
    libra::hotpath::SwitchControlClient client(config_.switch_control);
    try {
      client.RemoveJob(job.job_id, job.token);  // a previous run's job, if any
    } catch (const libra::hotpath::SwitchControlError&) {
    }
    client.InstallJob(job);
    job_ = job;
    installed_ = true;
    install.enabled = true;
    // The switch job above holds no key: only the hosts can tell a server's
    // UPDATE from a forged one.
    install.update_key = NewUpdateKey();
    // Kept with a checkpointed job's checkpoints (a resumed job reads it back
    // and does not write it again: its first epoch is the resumed one).
    if (!config_.save_install_path.empty() && !saved &&
        !WriteInstallFile(config_.save_install_path, install)) {
      LOG(WARNING) << "libra: could not write the INSTALL to " << config_.save_install_path
                   << "; a job resumed from its checkpoints will sample its hot set again";
    }
  } catch (const std::exception& e) {
    install.enabled = false;
    install.hot_set = nullptr;
    install.reason = e.what();
  }
  return install;
}

nlohmann::json Controller::CostReport() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!cost_) return nullptr;
  nlohmann::json report = libra::hot::PredictionJson(*cost_);
  report["why"] = cost_why_;
  report["decide_micros"] = decide_time_.count();
  return report;
}

void Controller::SetApp(ps::SimpleApp* app, const Heads& heads) {
  std::lock_guard<std::mutex> lock(mu_);
  app_ = app;
  heads_ = heads;
}

void Controller::OnWorkerDone(const WorkerDone& done) {
  std::vector<std::pair<ps::SimpleData, JoinRequest>> answered;
  std::optional<Install> plain;
  ps::SimpleApp* app = nullptr;
  bool all_done = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    app = app_;
    done_.emplace(done.rank, done.next_epoch);
    all_done = done_.size() == static_cast<size_t>(num_workers_);
    const bool joined = std::any_of(joins_.begin(), joins_.end(), [&](const auto& j) {
      return j.second.role == JoinRequest::Role::kWorker && j.second.rank == done.rank;
    });
    if (!decided_ && !joined) {
      // Every epoch of the hot path needs this worker's FIN: without its
      // JOIN there is none to run, and the others go on as PS-lite would.
      Install install;
      install.job_id = config_.job_id;
      install.num_workers = static_cast<uint32_t>(num_workers_);
      install.reason = "worker " + std::to_string(done.rank) + " ended after " +
                       std::to_string(done.next_epoch) +
                       " pushes, before it joined the hot path (which needs every worker's "
                       "pushes, equally many)";
      plain_for_good_ = install;
      plain = install;
      decided_ = true;
      answered = std::move(joins_);
      joins_.clear();
      counts_ = {};
    }
  }
  if (plain) Answer(*plain, answered, app);
  if (app == nullptr) return;
  app->Request(heads_.done, Encode(done), ps::kWorkerGroup);
  if (all_done) app->Request(heads_.all_done, "", ps::kWorkerGroup);
}

void Controller::OnPushedPast(const WorkerDone& past) {
  std::vector<WorkerDone> pads;
  ps::SimpleApp* app = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    app = app_;
    for (auto& [rank, next_epoch] : done_) {
      if (rank == past.rank || next_epoch >= past.next_epoch) continue;
      if (padded_.insert(rank).second) {
        LOG(INFO) << "libra: worker " << past.rank << " pushed epoch " << past.next_epoch - 1
                  << ", and worker " << rank << " ended before epoch " << next_epoch << ": worker "
                  << rank
                  << " pushes empty epochs for as long as others push (workers that push "
                     "unequally often)";
      }
      next_epoch = past.next_epoch;
      pads.push_back(WorkerDone{rank, past.next_epoch});
    }
  }
  if (app == nullptr) return;
  for (const WorkerDone& pad : pads) {
    app->Request(heads_.pad, Encode(pad),
                 ps::Postoffice::WorkerRankToID(static_cast<int>(pad.rank)));
  }
}

void Controller::OnSwitchDown(const SwitchDown& down, int sender) {
  std::lock_guard<std::mutex> lock(mu_);
  // A report from an earlier incarnation, or one more of this failure.
  if (!installed_ || down.generation != generation_ || switch_down_ || stopping_) return;
  switch_down_ = true;
  down_since_ = std::chrono::steady_clock::now();
  LOG(WARNING) << "libra: node " << sender << " found the switch down at epoch " << down.epoch
               << " (" << down.reason
               << "); the servers aggregate the hot keys until the switch answers again";
  SwitchDown notice = down;
  notice.generation = generation_;
  if (app_) app_->Request(heads_.switch_down, Encode(notice), ps::kWorkerGroup + ps::kServerGroup);
  if (!watcher_.joinable())
    watcher_ = std::thread([this] {
      pthread_setname_np(pthread_self(), "hot-switchwatch");
      WatchSwitch();
    });
  cond_.notify_all();
}

void Controller::OnResumeAnswer(uint32_t worker, uint32_t next_epoch) {
  std::lock_guard<std::mutex> lock(mu_);
  if (worker >= static_cast<uint32_t>(num_workers_)) {
    LOG(ERROR) << "libra controller: dropped a RESUME_QUERY answer of worker " << worker
               << " (the job has " << num_workers_ << ")";
    return;
  }
  resume_answers_[worker] = next_epoch;
  cond_.notify_all();
}

void Controller::WatchSwitch() {
  // How often a down switch is probed, and how long a probe may take.
  constexpr auto kProbeEvery = std::chrono::milliseconds(500);
  constexpr auto kProbeTimeout = std::chrono::milliseconds(300);
  std::unique_lock<std::mutex> lock(mu_);
  bool first = true;  // a switch started again at once is found at once
  while (!stopping_) {
    if (!first) cond_.wait_for(lock, kProbeEvery, [this] { return stopping_; });
    first = false;
    if (stopping_ || !switch_down_) continue;
    // The first failure is resumed from as soon as the switch answers; a
    // switch that fails again after each resume (up, but dropping packets)
    // waits longer each time: 1 s, 2 s, 4 s... at most 64 s.
    const auto backoff = resumes_ == 0 ? std::chrono::seconds(0)
                                       : std::chrono::seconds(1 << std::min(resumes_ - 1, 6u));
    if (std::chrono::steady_clock::now() - down_since_ < backoff) continue;
    lock.unlock();
    bool up = false;
    try {
      libra::hotpath::SwitchControlClient client(config_.switch_control, kProbeTimeout);
      up = client.Probe();
    } catch (const std::exception&) {
    }
    if (up) TryResume();
    lock.lock();
  }
}

void Controller::TryResume() {
  // How long the workers have to answer RESUME_QUERY (their receive threads
  // answer at once; only a node that is gone does not).
  constexpr auto kAnswerBudget = std::chrono::seconds(5);
  {
    std::lock_guard<std::mutex> lock(mu_);
    resume_answers_.clear();
    app_->Request(heads_.resume_query, "", ps::kWorkerGroup);
  }
  uint32_t first_epoch = 0;
  {
    std::unique_lock<std::mutex> lock(mu_);
    const bool all = cond_.wait_for(lock, kAnswerBudget, [this] {
      return stopping_ || resume_answers_.size() == static_cast<size_t>(num_workers_);
    });
    if (stopping_) return;
    if (!all) {
      LOG(WARNING) << "libra: the switch answers again, but only " << resume_answers_.size()
                   << " of " << num_workers_ << " workers answered; staying in fallback";
      lock.unlock();
      CancelResume();
      return;
    }
    for (const auto& [node, next] : resume_answers_) first_epoch = std::max(first_epoch, next);
  }
  libra::SwitchJob job;
  uint32_t generation = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    generation = generation_ + 1;
    job = job_;
  }
  const uint32_t failed_job = job.job_id;
  job.job_id = JobIdOf(config_.job_id, generation);
  try {
    libra::hotpath::SwitchControlClient client(config_.switch_control);
    try {
      client.RemoveJob(failed_job, job.token);  // a switch that came back with its state
    } catch (const libra::hotpath::SwitchControlError&) {
    }
    client.InstallJob(job);
  } catch (const std::exception& e) {
    LOG(WARNING) << "libra: the switch answers again but took no job (" << e.what()
                 << "); staying in fallback";
    CancelResume();
    return;
  }
  Resume resume;
  resume.generation = generation;
  resume.job_id = job.job_id;
  resume.first_epoch = first_epoch;
  std::lock_guard<std::mutex> lock(mu_);
  job_ = job;
  generation_ = generation;
  switch_down_ = false;
  ++resumes_;
  const double down_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - down_since_).count();
  LOG(WARNING) << "libra: the switch answers again after " << down_s
               << " s; the hot path resumes at epoch " << first_epoch << " (job id " << job.job_id
               << ")";
  app_->Request(heads_.resume, Encode(resume), ps::kWorkerGroup + ps::kServerGroup);
}

void Controller::CancelResume() {
  std::lock_guard<std::mutex> lock(mu_);
  Resume cancel;
  cancel.generation = generation_;
  cancel.job_id = 0;
  app_->Request(heads_.resume, Encode(cancel), ps::kWorkerGroup);
}

void Controller::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cond_.notify_all();
  if (watcher_.joinable()) watcher_.join();
  std::lock_guard<std::mutex> lock(mu_);
  if (!installed_) return;
  try {
    libra::hotpath::SwitchControlClient client(config_.switch_control,
                                               std::chrono::milliseconds(500));
    client.RemoveJob(job_.job_id, config_.job_token);
  } catch (const std::exception& e) {
    LOG(WARNING) << "libra: could not remove the job from the switch: " << e.what();
  }
  installed_ = false;
}

}  // namespace libra::hotpath
