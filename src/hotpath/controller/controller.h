// The controller, in the scheduler: waits for the JOIN of every node, decides
// the hot set (from LIBRA_HOT_SET, or from the workers' sampled key counts),
// places it, picks the fixed-point scale, installs the job on the switch and
// answers every JOIN with the INSTALL. If anything fails (no switch, a bad
// file, nothing sampled) the answer says so and the job stays on the plain
// parameter server: Libra never stops a job that PS-lite would run.
//
// When a node reports the switch down, the controller tells every node to
// fall back (the servers sum the hot keys, docs/design.md section 2) and probes
// the switch's control port. Once it answers, the controller asks the
// workers for their next epoch (they hold pushes from there), installs the
// job again under a new job id (so nothing of the failed incarnation can
// reach the new registers), and tells every node to resume the hot path at
// the largest of those epochs: an epoch boundary every worker has yet to
// push.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "hot/cost_model.h"
#include "hot/hot_switch_layout.h"
#include "hotpath/controller/join_counts.h"
#include "hotpath/messages/control_messages.h"
#include "hotpath/node/hot_path_config.h"
#include "ps/simple_app.h"

namespace libra::hotpath {

class Controller {
 public:
  Controller(const HotPathConfig& config, int num_workers, int num_servers);

  // A JOIN arrived (ps::SimpleApp request handle): answers all once all are
  // in, and, when a worker joined before its first push (scale_follows),
  // once a SCALE has come too.
  void OnJoin(const ps::SimpleData& request, ps::SimpleApp* app);
  // A worker's SCALE: the largest |value| of its first push. The first one
  // decides the fixed-point scale for workers that joined at their first
  // pull (answered through the app of SetApp).
  void OnScale(const ScaleReport& scale);
  // The heads of the messages the controller sends the nodes.
  struct Heads {
    int switch_down = 0, resume_query = 0, resume = 0, done = 0, pad = 0, all_done = 0;
  };
  // The app to send them with.
  void SetApp(ps::SimpleApp* app, const Heads& heads);
  // A worker's DONE: it will push no more. Forwarded to every worker;
  // ALL_DONE once every worker's is in. Before the choice, from a worker
  // that has not joined (and never will): every JOIN, also a later one, is
  // answered plain.
  void OnWorkerDone(const WorkerDone& done);
  // A worker pushed epoch `past.next_epoch - 1`, at or after the end of a
  // done worker: PAD to each such worker, up to that epoch.
  void OnPushedPast(const WorkerDone& past);
  // A node (id `sender`) found the switch dead.
  void OnSwitchDown(const SwitchDown& down, int sender);
  // Worker `worker`'s (its rank's) answer to RESUME_QUERY: the next epoch it
  // will push. By rank, not by sender: a process that is several workers
  // (customers as workers) answers once for each from one node id.
  void OnResumeAnswer(uint32_t worker, uint32_t next_epoch);
  // Removes the job from the switch if one was installed.
  void Stop();

  // The switch job id of incarnation `generation` of the job `job_id`.
  static uint32_t JobIdOf(uint32_t job_id, uint32_t generation) {
    return job_id + (generation << 16);
  }

  // The scale F for N workers whose values reach `max_abs`: N * max_abs *
  // 2^F stays 16x below the int32 limit, F in [0, 30] (the switch's whole
  // range: gradients well below 1 keep their low bits); 16 if nothing is
  // known.
  static int ChooseScaleBits(uint32_t num_workers, float max_abs);

  // The cost model's choice (LIBRA_CAPACITY=auto) for the scheduler's report:
  // null before it or without it; else "why" and the chosen set's predicted
  // per-epoch bytes, packets and seconds (docs/hot-parameters.md).
  nlohmann::json CostReport();

 private:
  // Every node has joined, and the scale's magnitude is known (from the
  // JOINs, or a SCALE when a worker's JOIN said one follows). Under mu_.
  bool ReadyToDecide() const;
  // Decides, and takes the JOINs to answer. Under mu_.
  Install DecideAndTakeJoins(std::vector<std::pair<ps::SimpleData, JoinRequest>>* joins);
  void Answer(const Install& install,
              const std::vector<std::pair<ps::SimpleData, JoinRequest>>& joins, ps::SimpleApp* app);
  Install Decide();
  // The switch layout for this many workers, and the cells a hot set may
  // take of it (LIBRA_CAPACITY, or all).
  libra::hot::SwitchLayout Layout() const;
  uint64_t CapacityCells(const libra::hot::SwitchLayout& layout) const;
  // The cost model's input for this job without keys: every counted push
  // on the servers (the workers' `counted_pairs` and `counted_values`
  // summed), and the plain epoch as measured.
  libra::hot::CostInput CostInputWithoutKeys(double measured_plain_epoch_s, double counted_pairs,
                                             double counted_values) const;
  // Whether `join`'s counts may wait until every node has joined: with the
  // cost model (LIBRA_CAPACITY=auto, sampling), when its worker's own epoch
  // and pushes already leave the model's floor no room for a set, the
  // controller reads its counts only if all the JOINs together leave some
  // (NoSetCanPay); otherwise it sums them as they come, behind the JOINs
  // still on their way.
  bool MaySumLater(const JoinRequest& join) const;
  // The hot set of the sampled counts, and the server that owns each key.
  // With several servers, the hot set re-placed so that each server owns
  // whole rows (BandedPlacement) and reads them with one COLLECT per row;
  // the given set when there is one server or the bands do not fit.
  std::shared_ptr<const libra::hot::HotSet> BandByServer(
      std::shared_ptr<const libra::hot::HotSet> hot_set, const std::vector<uint32_t>& owners) const;
  std::shared_ptr<const libra::hot::HotSet> ChooseFromSamples(std::vector<uint32_t>* owners,
                                                              std::string* why);

  // Probes the switch while it is down and resumes the hot path when it
  // answers (its own thread).
  void WatchSwitch();
  void TryResume();
  // Tells the workers that held their pushes to go on in fallback.
  void CancelResume();

  const HotPathConfig config_;
  const int num_workers_;
  const int num_servers_;
  std::mutex mu_;
  // The JOINs so far, to answer (their headers; the bodies, with the
  // counts, are in counts_).
  std::vector<std::pair<ps::SimpleData, JoinRequest>> joins_;
  JoinCounts counts_;
  // The largest |value| the SCALEs have reported, once one has come.
  std::optional<float> scale_max_abs_;
  bool installed_ = false;
  bool decided_ = false;  // the JOINs answered (the hot set or plain)
  // The answer to every JOIN once a worker ended before it joined.
  std::optional<Install> plain_for_good_;
  // By worker rank, each done worker's next epoch: its DONE's, then the
  // end of the last PAD it was sent.
  std::map<uint32_t, uint32_t> done_;
  std::set<uint32_t> padded_;                       // done workers sent a PAD (logged once each)
  std::optional<libra::hot::CostPrediction> cost_;  // the cost model's choice
  std::string cost_why_;
  // From the last JOIN to the INSTALL: what every worker may wait for at
  // the first hot epoch.
  std::chrono::microseconds decide_time_{0};

  ps::SimpleApp* app_ = nullptr;
  Heads heads_;
  libra::SwitchJob job_;     // as installed, with the current incarnation's id
  uint32_t generation_ = 0;  // incremented by each RESUME
  bool switch_down_ = false;
  uint32_t resumes_ = 0;
  bool stopping_ = false;
  std::chrono::steady_clock::time_point down_since_;
  std::map<uint32_t, uint32_t> resume_answers_;  // by worker rank
  std::condition_variable cond_;                 // a resume answer, a switch down, or stopping
  std::thread watcher_;
};

}  // namespace libra::hotpath
