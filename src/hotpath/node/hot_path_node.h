// The hot path's control plane in one process: the JOIN/INSTALL exchange
// with the controller (src/ps/hotpath_controller.h, in the scheduler), the
// UDP address this node uses, and the steps the hot path adds to ps::Start
// and ps::Finalize. The data path lives in the worker and server bridges
// (include/ps/internal/hotpath_worker.h, hotpath_server.h).
//
// Who joins when: servers at Start (they only wait for the INSTALL, in the
// background); workers when they reach the first hot epoch (0 with a hot-set
// file, LIBRA_SAMPLE_EPOCHS with sampling), blocking that push until the
// controller has heard every node and answered. So every worker switches to
// the hot path at the same epoch, and servers collect from that epoch on.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "hotpath/messages/control_messages.h"
#include "hotpath/node/hot_path_config.h"
#include "ps/simple_app.h"

namespace libra::hotpath {

class Controller;

class HotPathNode {
 public:
  // The process's node; it does nothing unless Config().enabled.
  static HotPathNode* Get();

  bool enabled() const { return Config().enabled; }

  // After the van is up: creates the control-plane app; a server joins.
  void Start();
  // Before Finalize's barrier: runs the drain callbacks (workers wait until
  // the servers have applied every epoch they pushed).
  void BeforeFinalBarrier();
  // After Finalize's barrier: the scheduler removes the job from the switch.
  void Stop();

  // A free UDP port on this node's address, for the switch job.
  libra::UdpEndpoint ReserveUdpEndpoint();

  // Worker: sends JOIN and blocks until the controller answers.
  Install JoinAndWait(const JoinRequest& join);
  // Worker: asks every server for the values of `request.keys` as of
  // `request.epoch` (a replica gap) and returns their answers.
  std::vector<Repair> RequestRepair(const Repair& request);
  // Server: `handler` answers REPAIR requests (it may answer later, with
  // AnswerRepair); without one they are answered empty.
  using RepairHandler = std::function<void(const ps::SimpleData& request, Repair repair)>;
  void SetRepairHandler(RepairHandler handler);
  void AnswerRepair(const ps::SimpleData& request, const Repair& answer);
  // Server: `on_install` runs once the INSTALL is here (at once if it already
  // is), with the address this server announced.
  void OnServerInstall(std::function<void(const Install&, libra::UdpEndpoint)> on_install);

  // What the bridges do when the switch fails or returns (docs/design.md section
  // 2): set by the worker and server bridges; each runs on the control
  // plane's receive thread, so it must not block.
  struct SwitchEvents {
    // FALLBACK from the controller: the switch is down.
    std::function<void(const SwitchDown&)> switch_down;
    // Servers: a worker's hot values of an epoch, to sum here.
    std::function<void(const FallbackPush&)> fallback_push;
    // Workers: the next epoch this worker will push; it holds pushes from
    // that epoch on until the RESUME.
    std::function<uint32_t()> resume_query;
    // RESUME: the hot path runs again from an epoch (or, job id 0, stays
    // in fallback and the held pushes go on).
    std::function<void(const Resume&)> resume;
    // Workers: this worker's values of `ask.keys` in epoch `ask.epoch`
    // (FallbackPush::kNotRetained as the epoch when it no longer has it).
    std::function<FallbackPush(const Repair& ask)> values;
    // Servers: the keys a worker wrote in an epoch.
    std::function<void(const WrittenKeys&)> written_keys;
  };
  void SetSwitchEvents(SwitchEvents events);
  // Any node: tells the controller the switch stopped answering.
  void ReportSwitchDown(const SwitchDown& down);
  // Server: every worker's values of `ask.keys` in epoch `ask.epoch`.
  std::vector<FallbackPush> RequestWorkerValues(const Repair& ask);
  // Worker: sends one epoch's hot values to the server of rank `server`.
  void SendFallbackPush(int server, const FallbackPush& push);
  // Worker: tells the server of rank `server` which of its rows it wrote.
  void SendWrittenKeys(int server, const WrittenKeys& keys);

  // Bridges register what Finalize must wait for and what reports show.
  int AddDrain(std::function<void()> drain);
  void RemoveDrain(int id);
  void SetReport(std::function<nlohmann::json()> report);
  nlohmann::json Report();

 private:
  HotPathNode() = default;
  void HandleServerInstall(const std::string& body);
  void OnRequest(const ps::SimpleData& request, ps::SimpleApp* app);
  // Sends a request to `group` and waits for every answer, which the
  // response handler files in `answers` by the request's timestamp.
  template <typename Answer>
  std::vector<Answer> AskAndWait(int head, const std::string& body, int group,
                                 std::map<int, std::vector<Answer>>* answers) {
    const int timestamp = app_->Request(head, body, group);
    app_->Wait(timestamp);
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<Answer> out = std::move((*answers)[timestamp]);
    answers->erase(timestamp);
    return out;
  }

  static constexpr int kAppId = 0x4c48;  // any id other than the KV apps' 0

  std::mutex mu_;
  std::condition_variable cond_;
  std::unique_ptr<ps::SimpleApp> app_;
  std::unique_ptr<Controller> controller_;
  libra::UdpEndpoint server_address_;
  std::optional<Install> server_install_;
  std::optional<Install> worker_install_;
  std::function<void(const Install&, libra::UdpEndpoint)> on_server_install_;
  std::map<int, std::function<void()>> drains_;
  int next_drain_ = 0;
  std::function<nlohmann::json()> report_;
  RepairHandler repair_handler_;
  SwitchEvents events_;
  std::map<int, std::vector<Repair>> repair_answers_;  // by request timestamp
  std::map<int, std::vector<FallbackPush>> value_answers_;
};

}  // namespace libra::hotpath
