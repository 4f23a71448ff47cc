// The hot path's control plane in one process: the JOIN/INSTALL exchange
// with the controller (src/ps/hotpath_controller.h, in the scheduler), the
// UDP address this node uses, and the steps the hot path adds to ps::Start
// and ps::Finalize. The data path lives in the worker and server bridges
// (include/ps/internal/hotpath_worker.h, hotpath_server.h).
//
// Customers as workers (docs/runtime.md): a worker process may be several
// workers, one per customer that registered; each has its own worker path,
// which registers its events, drain and report here under its customer id.
// A request of the controller or a server addressed to one of the process's
// worker ids goes to that customer's path; the report lists every path.
//
// Who joins when: servers at Start (they only wait for the INSTALL, in the
// background); workers at their join epoch (HotPathConfig::join_epoch:
// halfway through the sampling phase, or the first hot epoch with a hot-set
// file or a saved INSTALL), from a thread of their own; a worker that
// reaches the first hot epoch (0 with a file, LIBRA_SAMPLE_EPOCHS with
// sampling) before the controller has heard every node and answered waits
// there. So every worker switches to the hot path at the same epoch,
// whatever the controller's choice took, and servers collect from that
// epoch on.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <vector>

#include "hotpath/messages/control_messages.h"
#include "hotpath/node/hot_path_config.h"
#include "net/udp_socket.h"
#include "ps/simple_app.h"

namespace libra::hotpath {

class Controller;

class HotPathNode {
 public:
  // The process's node; it does nothing unless Config().enabled.
  static HotPathNode* Get();

  bool enabled() const { return Config().enabled; }

  // This worker process's node id of customer `customer_id` as a worker of
  // its own (ps::Van::WorkerIdOfCustomer); ps::Node::kEmpty before ps::Start
  // or when it is no worker.
  static int WorkerIdOf(int customer_id);
  // The same as a worker rank; -1 where WorkerIdOf is ps::Node::kEmpty.
  static int WorkerRankOf(int customer_id);

  // After the van is up: creates the control-plane app; a server joins.
  void Start();
  // Before Finalize's barrier of customer `customer_id`: runs its drain
  // callbacks (its worker waits until the servers have applied every epoch
  // it pushed). A worker that had no worker path (no float KVWorker of app
  // 0) then tells the controller it is done before it joined, so that the
  // others, waiting for its JOIN, go on plain.
  void BeforeFinalBarrier(int customer_id);
  // After Finalize's barrier: the scheduler removes the job from the switch.
  void Stop();

  // A UDP port on this node's address for the switch job, held by a socket
  // bound to it until the process ends, so that no other process (or other
  // worker of this one) is given it while its JOIN names it. The engine
  // takes the socket over with ReservedSocket.
  libra::UdpEndpoint ReserveUdpEndpoint();
  // The socket that holds `endpoint` (one ReserveUdpEndpoint returned);
  // null for any other address.
  std::shared_ptr<libra::net::UdpSocket> ReservedSocket(const libra::UdpEndpoint& endpoint);

  // Worker: sends JOIN and blocks until the controller answers (on the
  // worker path's JOIN thread).
  Install JoinAndWait(const JoinRequest& join);
  // Worker: after a JOIN with scale_follows, the largest |value| of its
  // first push (answered by the controller, but nobody waits for that).
  void ReportScale(const ScaleReport& scale);
  // Worker: asks every server for the values of `request.keys` as of
  // `request.epoch` (a replica gap) and returns their answers.
  std::vector<Repair> RequestRepair(const Repair& request);
  // Worker: asks each server of `requests` (by rank) for the UPDATE packets
  // its request names, all before waiting for any (a gap in two servers'
  // streams costs one round trip, not two), and returns the answers in the
  // same order: one without packets where a server keeps none of them, or
  // after Stop.
  std::vector<PacketRepair> RequestPackets(
      const std::vector<std::pair<int, PacketRepair>>& requests);
  // Server: `handler` answers REPAIR_PACKETS requests (it may answer later,
  // with AnswerPacketRepair); without one they are answered without packets.
  using PacketRepairHandler =
      std::function<void(const ps::SimpleData& request, PacketRepair repair)>;
  void SetPacketRepairHandler(PacketRepairHandler handler);
  void AnswerPacketRepair(const ps::SimpleData& request, const PacketRepair& answer);
  // Server: `handler` answers REPAIR requests (it may answer later, with
  // AnswerRepair); without one they are answered empty.
  using RepairHandler = std::function<void(const ps::SimpleData& request, Repair repair)>;
  void SetRepairHandler(RepairHandler handler);
  void AnswerRepair(const ps::SimpleData& request, const Repair& answer);
  // Server: `on_install` runs once the INSTALL is here (at once if it already
  // is), with the address this server announced.
  void OnServerInstall(std::function<void(const Install&, libra::UdpEndpoint)> on_install);

  // What the bridges do when the switch fails or returns (docs/design.md section
  // 2): set by the worker and server bridges, each under its customer id (a
  // server's is 0); each runs on the control plane's receive thread, so it
  // must not block.
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
    // Workers: a worker (maybe this one) will push no more (its DONE,
    // forwarded by the controller).
    std::function<void(const WorkerDone&)> worker_done;
    // Workers that are done: push empty epochs up to `pad.next_epoch` (not
    // included), since another worker pushes them (PAD).
    std::function<void(const WorkerDone& pad)> pad;
    // Workers: every worker is done (ALL_DONE).
    std::function<void()> all_done;
  };
  // Empty events (SwitchEvents{}) remove the customer's.
  void SetSwitchEvents(int customer_id, SwitchEvents events);
  // Any node: tells the controller the switch stopped answering.
  void ReportSwitchDown(const SwitchDown& down);
  // Server: every worker's values of `ask.keys` in epoch `ask.epoch`.
  std::vector<FallbackPush> RequestWorkerValues(const Repair& ask);
  // Worker: sends one epoch's hot values to the server of rank `server`.
  void SendFallbackPush(int server, const FallbackPush& push);
  // Worker: tells the server of rank `server` which of its rows it wrote.
  void SendWrittenKeys(int server, const WrittenKeys& keys);
  // Worker: tells the controller it will push no more (DONE; false when
  // the control plane has stopped and nothing was sent), or that it has
  // pushed past the end of a worker that is done (PUSHED_PAST).
  bool ReportDone(const WorkerDone& done);
  // Whether worker `rank` of this process sent its DONE (a KVWorker of its
  // ended, or its Finalize began): a later KVWorker of it runs plain.
  bool DoneSent(uint32_t rank);
  void ReportPushedPast(const WorkerDone& past);

  // Bridges register what Finalize must wait for and what reports show,
  // under their customer id. The report of a process with one bridge is that
  // bridge's; with several (customers as workers), "customers" lists each,
  // with its "customer" id and worker "rank". A null report removes it.
  int AddDrain(int customer_id, std::function<void()> drain);
  void RemoveDrain(int id);
  void SetReport(int customer_id, std::function<nlohmann::json()> report);
  nlohmann::json Report();

  // The control plane's messages that are no answered request, for the
  // report's "control": notices (WRITTEN_KEYS) sent and received, and the
  // answers this node's requests got.
  struct ControlCounters {
    std::atomic<uint64_t> notices_sent{0}, notices_received{0}, answers_received{0};
  };

 private:
  HotPathNode() = default;
  void HandleServerInstall(const std::string& body);
  // `recver`: the node id the request was sent to (one of this process's).
  void OnRequest(const ps::SimpleData& request, int recver, ps::SimpleApp* app);
  // The events of the bridge that `recver` (a node id of this process) is.
  SwitchEvents EventsFor(int recver);
  // Sends a request to `group` and waits for every answer, which the
  // response handler files in `answers` by the request's timestamp.
  template <typename Answer>
  std::vector<Answer> AskAndWait(int head, const std::string& body, int group,
                                 std::map<int, std::vector<Answer>>* answers) {
    // After Stop nobody answers: a bridge outliving ps::Finalize gets none.
    if (!app_) return {};
    return WaitAndTake(app_->Request(head, body, group), answers);
  }
  // Waits until every answer to the request sent at `timestamp` is in and
  // takes them out of `answers`.
  template <typename Answer>
  std::vector<Answer> WaitAndTake(int timestamp, std::map<int, std::vector<Answer>>* answers) {
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
  ControlCounters control_counters_;
  std::unique_ptr<Controller> controller_;
  libra::UdpEndpoint server_address_;
  // Every socket ReserveUdpEndpoint bound, by port.
  std::map<uint16_t, std::shared_ptr<libra::net::UdpSocket>> reserved_sockets_;
  std::optional<Install> server_install_;
  std::optional<Install> worker_install_;
  std::function<void(const Install&, libra::UdpEndpoint)> on_server_install_;
  struct Drain {
    int customer_id;
    std::function<void()> run;
  };
  std::map<int, Drain> drains_;    // by AddDrain's id
  std::set<uint32_t> done_ranks_;  // the workers of this process that sent DONE
  int next_drain_ = 0;
  std::map<int, std::function<nlohmann::json()>> reports_;  // by customer id
  RepairHandler repair_handler_;
  PacketRepairHandler packet_repair_handler_;
  std::map<int, SwitchEvents> events_;                 // by customer id
  std::map<int, std::vector<Repair>> repair_answers_;  // by request timestamp
  std::map<int, std::vector<FallbackPush>> value_answers_;
  std::map<int, std::vector<PacketRepair>> packet_answers_;
};

}  // namespace libra::hotpath
