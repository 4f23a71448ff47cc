#include "hotpath/node/hot_path_node.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include "hotpath/controller/controller.h"
#include "hotpath/node/engine_socket.h"
#include "ps/internal/logging.h"
#include "ps/internal/postoffice.h"
#include "ps/internal/van.h"

namespace libra::hotpath {
namespace {

// The ps::SimpleApp heads of the control plane's messages (hotpath_messages.h).
enum Head : int {
  kJoin = 1,
  kRepair = 2,
  kSwitchDown = 3,
  kFallbackPush = 4,
  kResumeQuery = 5,
  kResume = 6,
  kValues = 7,
  kWrittenKeys = 8,
  kPacketRepair = 9,
  kScale = 10,
  kDone = 11,
  kPushedPast = 12,
  kPad = 13,
  kAllDone = 14,
};

// The node's own IPv4 address: the host it registered with (DMLC_NODE_HOST or
// DMLC_INTERFACE), so the switch sees the same address as the other nodes.
uint32_t NodeIpv4() {
  const std::string& host = ps::Postoffice::Get()->van()->my_node().hostname;
  in_addr addr{};
  if (inet_pton(AF_INET, host.c_str(), &addr) == 1) return ntohl(addr.s_addr);
  return 0x7f000001;
}

// The control plane's app. Its handles are in place before its customer
// exists: a JOIN that arrived before Start (parked by the van) is delivered
// the moment the customer is created, and must not meet a default handle.
// A handle may ask which of the process's node ids the message was sent to
// (customers as workers: one id per worker).
class ControlPlaneApp : public ps::SimpleApp {
 public:
  ControlPlaneApp(int app_id, const Handle& on_request, const Handle& on_response,
                  HotPathNode::ControlCounters* counters)
      : ps::SimpleApp(), counters_(counters) {
    set_request_handle(on_request);
    set_response_handle(on_response);
    obj_ = new ps::Customer(app_id, app_id, [this](const ps::Message& m) {
      recver_ = m.meta.recver;  // handles run in Process, on this thread
      if (!m.meta.request) {
        ++counters_->answers_received;
      } else if (IsNotice(m.meta.timestamp)) {
        ++counters_->notices_received;
      }
      Process(m);
    });
  }
  // The recipient of the message being handled (valid inside a handle).
  int recver() const { return recver_; }

  // Sends a request that is not answered: a notice, whose timestamp is no
  // request's (Meta::kEmpty), so the sender tracks nothing and the receiver's
  // handle must not respond (IsNotice). For what is sent every epoch and
  // needs no acknowledgement, an answer would be a message of its own each way.
  void Notify(int head, const std::string& body, int recv_id) {
    counters_->notices_sent += SendRequest(head, body, recv_id, ps::Meta::kEmpty);
  }
  static bool IsNotice(int timestamp) { return timestamp == ps::Meta::kEmpty; }

 private:
  int recver_ = ps::Meta::kEmpty;
  HotPathNode::ControlCounters* counters_;  // the node's, which outlives the app
};

// A malformed INSTALL (never sent by a controller of this build) leaves the
// node on the plain parameter server rather than stopping it.
Install DecodeInstallOrPlain(const std::string& body) {
  std::optional<Install> install = DecodeInstall(body);
  if (install) return *install;
  LOG(ERROR) << "libra: malformed INSTALL from the controller; staying on the plain path";
  Install plain;
  plain.reason = "malformed INSTALL";
  return plain;
}

}  // namespace

int HotPathNode::WorkerIdOf(int customer_id) {
  ps::Van* van = ps::Postoffice::Get()->van();
  return van ? van->WorkerIdOfCustomer(customer_id) : ps::Node::kEmpty;
}

int HotPathNode::WorkerRankOf(int customer_id) {
  const int worker_id = WorkerIdOf(customer_id);
  return worker_id == ps::Node::kEmpty ? -1 : ps::Postoffice::IDtoRank(worker_id);
}

HotPathNode* HotPathNode::Get() {
  // Never destroyed: a program that exits without ps::Finalize must not run
  // the control plane's teardown after the ps::Postoffice's.
  static HotPathNode* node = new HotPathNode();
  return node;
}

libra::UdpEndpoint HotPathNode::ReserveUdpEndpoint() {
  // Bound with port 0 (the kernel picks a free one) and kept: a port merely
  // learned and released could be handed to another process before the
  // engine binds it, and the switch would refuse a job that lists it twice.
  auto socket = std::make_shared<libra::net::UdpSocket>(libra::UdpEndpoint{NodeIpv4(), 0},
                                                        EngineSocketOptions());
  const libra::UdpEndpoint endpoint = socket->local();
  std::lock_guard<std::mutex> lock(mu_);
  reserved_sockets_[endpoint.port] = std::move(socket);
  return endpoint;
}

std::shared_ptr<libra::net::UdpSocket> HotPathNode::ReservedSocket(
    const libra::UdpEndpoint& endpoint) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = reserved_sockets_.find(endpoint.port);
  if (it == reserved_sockets_.end() || !(it->second->local() == endpoint)) return nullptr;
  return it->second;
}

void HotPathNode::Start() {
  if (!enabled()) return;
  ps::Postoffice* po = ps::Postoffice::Get();
  ps::SimpleApp::Handle on_request;
  ps::SimpleApp::Handle on_response = [](const ps::SimpleData&, ps::SimpleApp*) {};
  if (po->is_scheduler()) {
    controller_ = std::make_unique<Controller>(Config(), po->num_workers(), po->num_servers());
    on_request = [this](const ps::SimpleData& request, ps::SimpleApp* app) {
      if (request.head == kSwitchDown) {
        std::optional<SwitchDown> down = DecodeSwitchDown(request.body);
        app->Response(request);
        if (down) controller_->OnSwitchDown(*down, request.sender);
        return;
      }
      if (request.head == kDone || request.head == kPushedPast) {
        std::optional<WorkerDone> done = DecodeWorkerDone(request.body);
        app->Response(request);
        if (!done) {
          LOG(ERROR) << "libra controller: dropped a malformed "
                     << (request.head == kDone ? "DONE" : "PUSHED_PAST") << " from node "
                     << request.sender;
        } else if (request.head == kDone) {
          controller_->OnWorkerDone(*done);
        } else {
          controller_->OnPushedPast(*done);
        }
        return;
      }
      if (request.head == kScale) {
        std::optional<ScaleReport> scale = DecodeScale(request.body);
        app->Response(request);
        if (scale) {
          controller_->OnScale(*scale);
        } else {
          LOG(ERROR) << "libra controller: dropped a malformed SCALE from node " << request.sender;
        }
        return;
      }
      controller_->OnJoin(request, app);
    };
    on_response = [this](const ps::SimpleData& response, ps::SimpleApp*) {
      if (response.head != kResumeQuery) return;  // acknowledgements
      std::optional<Resume> answer = DecodeResume(response.body);
      if (answer) controller_->OnResumeAnswer(answer->worker, answer->first_epoch);
    };
  } else {
    on_request = [this](const ps::SimpleData& request, ps::SimpleApp* app) {
      OnRequest(request, static_cast<ControlPlaneApp*>(app)->recver(), app);
    };
    on_response = [this, po](const ps::SimpleData& response, ps::SimpleApp*) {
      if (response.head == kRepair) {
        std::optional<Repair> answer = DecodeRepair(response.body);
        std::lock_guard<std::mutex> lock(mu_);
        if (answer) repair_answers_[response.timestamp].push_back(std::move(*answer));
        return;
      }
      if (response.head == kPacketRepair) {
        std::optional<PacketRepair> answer = DecodePacketRepair(response.body);
        std::lock_guard<std::mutex> lock(mu_);
        if (answer) packet_answers_[response.timestamp].push_back(std::move(*answer));
        return;
      }
      if (response.head == kValues) {
        std::optional<FallbackPush> answer = DecodeFallbackPush(response.body);
        std::lock_guard<std::mutex> lock(mu_);
        if (answer) value_answers_[response.timestamp].push_back(std::move(*answer));
        return;
      }
      if (response.head != kJoin) return;  // acknowledgements
      if (po->is_server()) {
        HandleServerInstall(response.body);
        return;
      }
      std::lock_guard<std::mutex> lock(mu_);
      worker_install_ = DecodeInstallOrPlain(response.body);
      cond_.notify_all();
    };
  }
  app_ = std::make_unique<ControlPlaneApp>(kAppId, on_request, on_response, &control_counters_);
  if (po->is_scheduler()) {
    Controller::Heads heads;
    heads.switch_down = kSwitchDown;
    heads.resume_query = kResumeQuery;
    heads.resume = kResume;
    heads.done = kDone;
    heads.pad = kPad;
    heads.all_done = kAllDone;
    controller_->SetApp(app_.get(), heads);
    return;
  }
  if (po->is_server()) {
    JoinRequest join;
    join.role = JoinRequest::Role::kServer;
    join.rank = static_cast<uint32_t>(po->my_rank());
    join.address = server_address_ = ReserveUdpEndpoint();
    app_->Request(kJoin, Encode(join), ps::kScheduler);
  }
}

HotPathNode::SwitchEvents HotPathNode::EventsFor(int recver) {
  // A worker id of this process: its customer's bridge, and only that one
  // (a finished customer's request is not answered by another's bridge).
  const int customer = ps::Postoffice::Get()->van()->CustomerOfWorkerId(recver);
  std::lock_guard<std::mutex> lock(mu_);
  if (customer >= 0) {
    auto it = events_.find(customer);
    return it == events_.end() ? SwitchEvents{} : it->second;
  }
  // A server (its one bridge), or an id that is no worker of this process.
  return events_.size() == 1 ? events_.begin()->second : SwitchEvents{};
}

// Requests to a worker or server. Every one is answered (an empty answer for
// what this node does not handle), so that no sender waits forever; a notice
// (WRITTEN_KEYS, which nobody waits for) never is. A
// request sent to a worker id goes to that worker's bridge; the controller
// and the servers send to every worker id, so each bridge gets its own.
void HotPathNode::OnRequest(const ps::SimpleData& request, int recver, ps::SimpleApp* app) {
  const SwitchEvents events = EventsFor(recver);
  RepairHandler repair_handler;
  PacketRepairHandler packet_repair_handler;
  {
    std::lock_guard<std::mutex> lock(mu_);
    repair_handler = repair_handler_;
    packet_repair_handler = packet_repair_handler_;
  }
  switch (request.head) {
    case kPacketRepair: {
      std::optional<PacketRepair> repair = DecodePacketRepair(request.body);
      if (repair && packet_repair_handler) {
        packet_repair_handler(request, std::move(*repair));
        return;
      }
      if (!repair) {
        LOG(ERROR) << "libra: answered a malformed REPAIR_PACKETS from node " << request.sender
                   << " without packets";
      }
      app->Response(request,
                    Encode(PacketRepair{repair ? repair->epoch : 0, {}, kNoStreamTail, {}}));
      return;
    }
    case kRepair: {
      std::optional<Repair> repair = DecodeRepair(request.body);
      if (repair && repair_handler) {
        repair_handler(request, std::move(*repair));
      } else {
        app->Response(request, Encode(Repair{}));
      }
      return;
    }
    case kFallbackPush: {
      std::optional<FallbackPush> push = DecodeFallbackPush(request.body);
      app->Response(request);
      if (!push) {
        LOG(ERROR) << "libra: dropped a malformed FALLBACK_PUSH from node " << request.sender;
      } else if (events.fallback_push) {
        events.fallback_push(*push);
      }
      return;
    }
    case kWrittenKeys: {
      std::optional<WrittenKeys> keys = DecodeWrittenKeys(request.body);
      if (!ControlPlaneApp::IsNotice(request.timestamp)) app->Response(request);
      if (!keys) {
        LOG(ERROR) << "libra: dropped a malformed WRITTEN_KEYS from node " << request.sender;
      } else if (events.written_keys) {
        events.written_keys(*keys);
      }
      return;
    }
    case kDone:
    case kPad: {
      std::optional<WorkerDone> done = DecodeWorkerDone(request.body);
      app->Response(request);
      if (!done) {
        LOG(ERROR) << "libra: dropped a malformed " << (request.head == kDone ? "DONE" : "PAD")
                   << " from node " << request.sender;
      } else if (request.head == kDone && events.worker_done) {
        events.worker_done(*done);
      } else if (request.head == kPad && events.pad) {
        events.pad(*done);
      }
      return;
    }
    case kAllDone: {
      app->Response(request);
      if (events.all_done) events.all_done();
      return;
    }
    case kSwitchDown: {
      std::optional<SwitchDown> down = DecodeSwitchDown(request.body);
      app->Response(request);
      if (down && events.switch_down) events.switch_down(*down);
      return;
    }
    case kResumeQuery: {
      Resume answer;
      answer.worker = static_cast<uint32_t>(ps::Postoffice::IDtoRank(recver));
      if (events.resume_query) answer.first_epoch = events.resume_query();
      app->Response(request, Encode(answer));
      return;
    }
    case kResume: {
      std::optional<Resume> resume = DecodeResume(request.body);
      app->Response(request);
      if (resume && events.resume) events.resume(*resume);
      return;
    }
    case kValues: {
      std::optional<Repair> ask = DecodeRepair(request.body);
      FallbackPush answer;
      answer.epoch = FallbackPush::kNotRetained;
      if (ask && events.values) answer = events.values(*ask);
      app->Response(request, Encode(answer));
      return;
    }
    default:
      app->Response(request);
  }
}

std::vector<FallbackPush> HotPathNode::RequestWorkerValues(const Repair& ask) {
  return AskAndWait(kValues, Encode(ask), ps::kWorkerGroup, &value_answers_);
}

void HotPathNode::SetSwitchEvents(int customer_id, SwitchEvents events) {
  std::lock_guard<std::mutex> lock(mu_);
  const bool none = !events.switch_down && !events.fallback_push && !events.resume_query &&
                    !events.resume && !events.values && !events.written_keys &&
                    !events.worker_done && !events.pad && !events.all_done;
  if (none) {
    events_.erase(customer_id);
  } else {
    events_[customer_id] = std::move(events);
  }
}

void HotPathNode::ReportSwitchDown(const SwitchDown& down) {
  if (app_) app_->Request(kSwitchDown, Encode(down), ps::kScheduler);
}

void HotPathNode::SendFallbackPush(int server, const FallbackPush& push) {
  if (app_) app_->Request(kFallbackPush, Encode(push), ps::Postoffice::ServerRankToID(server));
}

void HotPathNode::SendWrittenKeys(int server, const WrittenKeys& keys) {
  // Every epoch, to every server the worker wrote keys of: a notice, since
  // an acknowledgement would be two more messages an epoch and tell nothing
  // (the collector reads every cell when a report is missing).
  if (app_) {
    static_cast<ControlPlaneApp*>(app_.get())
        ->Notify(kWrittenKeys, Encode(keys), ps::Postoffice::ServerRankToID(server));
  }
}

bool HotPathNode::ReportDone(const WorkerDone& done) {
  if (!app_) return false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_ranks_.insert(done.rank);
  }
  app_->Request(kDone, Encode(done), ps::kScheduler);
  return true;
}

bool HotPathNode::DoneSent(uint32_t rank) {
  std::lock_guard<std::mutex> lock(mu_);
  return done_ranks_.count(rank) != 0;
}

void HotPathNode::ReportPushedPast(const WorkerDone& past) {
  if (app_) app_->Request(kPushedPast, Encode(past), ps::kScheduler);
}

void HotPathNode::ReportScale(const ScaleReport& scale) {
  if (app_) app_->Request(kScale, Encode(scale), ps::kScheduler);
}

Install HotPathNode::JoinAndWait(const JoinRequest& join) {
  CHECK(app_) << "libra: a push before ps::Start";
  app_->Request(kJoin, Encode(join), ps::kScheduler);
  std::unique_lock<std::mutex> lock(mu_);
  cond_.wait(lock, [this] { return worker_install_.has_value(); });
  return *worker_install_;
}

std::vector<Repair> HotPathNode::RequestRepair(const Repair& request) {
  return AskAndWait(kRepair, Encode(request), ps::kServerGroup, &repair_answers_);
}

std::vector<PacketRepair> HotPathNode::RequestPackets(
    const std::vector<std::pair<int, PacketRepair>>& requests) {
  std::vector<PacketRepair> out;
  for (const auto& [server_rank, request] : requests) {
    out.push_back(PacketRepair{request.epoch, {}, kNoStreamTail, {}});
  }
  // After Stop nobody answers: a bridge outliving ps::Finalize gets none.
  if (!app_) return out;
  std::vector<int> timestamps;
  for (const auto& [server_rank, request] : requests) {
    timestamps.push_back(
        app_->Request(kPacketRepair, Encode(request), ps::Postoffice::ServerRankToID(server_rank)));
  }
  for (size_t i = 0; i < timestamps.size(); ++i) {
    std::vector<PacketRepair> answers = WaitAndTake(timestamps[i], &packet_answers_);
    if (!answers.empty()) out[i] = std::move(answers.front());
  }
  return out;
}

void HotPathNode::SetPacketRepairHandler(PacketRepairHandler handler) {
  std::lock_guard<std::mutex> lock(mu_);
  packet_repair_handler_ = std::move(handler);
}

void HotPathNode::AnswerPacketRepair(const ps::SimpleData& request, const PacketRepair& answer) {
  if (app_) app_->Response(request, Encode(answer));
}

void HotPathNode::SetRepairHandler(RepairHandler handler) {
  std::lock_guard<std::mutex> lock(mu_);
  repair_handler_ = std::move(handler);
}

void HotPathNode::AnswerRepair(const ps::SimpleData& request, const Repair& answer) {
  if (app_) app_->Response(request, Encode(answer));
}

void HotPathNode::HandleServerInstall(const std::string& body) {
  std::function<void(const Install&, libra::UdpEndpoint)> callback;
  {
    std::lock_guard<std::mutex> lock(mu_);
    server_install_ = DecodeInstallOrPlain(body);
    callback = on_server_install_;
  }
  if (callback) callback(*server_install_, server_address_);
}

void HotPathNode::OnServerInstall(
    std::function<void(const Install&, libra::UdpEndpoint)> on_install) {
  std::optional<Install> ready;
  {
    std::lock_guard<std::mutex> lock(mu_);
    on_server_install_ = on_install;
    ready = server_install_;
  }
  if (ready && on_install) on_install(*ready, server_address_);
}

int HotPathNode::AddDrain(int customer_id, std::function<void()> drain) {
  std::lock_guard<std::mutex> lock(mu_);
  drains_[next_drain_] = Drain{customer_id, std::move(drain)};
  return next_drain_++;
}

void HotPathNode::RemoveDrain(int id) {
  std::lock_guard<std::mutex> lock(mu_);
  drains_.erase(id);
}

void HotPathNode::BeforeFinalBarrier(int customer_id) {
  std::vector<std::function<void()>> drains;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [id, drain] : drains_) {
      if (drain.customer_id == customer_id) drains.push_back(drain.run);
    }
  }
  for (auto& drain : drains) drain();
  // A worker without a worker path of its own (it made no float KVWorker of
  // app 0, or one of another type) never joins: the controller, waiting for
  // every worker's JOIN, would keep the others at their first hot epoch for
  // good. Its DONE, with nothing pushed, answers them plain.
  if (!enabled() || !ps::Postoffice::Get()->is_worker()) return;
  const int rank = WorkerRankOf(customer_id);
  if (rank < 0 || DoneSent(static_cast<uint32_t>(rank))) return;
  ReportDone(WorkerDone{static_cast<uint32_t>(rank), 0});
}

void HotPathNode::Stop() {
  if (controller_) controller_->Stop();
  app_.reset();
}

void HotPathNode::SetReport(int customer_id, std::function<nlohmann::json()> report) {
  std::lock_guard<std::mutex> lock(mu_);
  if (report) {
    reports_[customer_id] = std::move(report);
  } else {
    reports_.erase(customer_id);
  }
}

nlohmann::json HotPathNode::Report() {
  std::map<int, std::function<nlohmann::json()>> reports;
  std::optional<Install> install;
  {
    std::lock_guard<std::mutex> lock(mu_);
    reports = reports_;
    install = worker_install_ ? worker_install_ : server_install_;
  }
  if (!enabled()) return {{"enabled", false}};
  nlohmann::json out = nlohmann::json::object();
  if (reports.size() == 1) {
    out = reports.begin()->second();
  } else if (reports.size() > 1) {
    // Customers as workers: one entry per worker of this process.
    out["role"] = "worker";
    out["customers"] = nlohmann::json::array();
    for (const auto& [customer, report] : reports) {
      nlohmann::json entry = report();
      entry["customer"] = customer;
      const int id = WorkerIdOf(customer);
      if (id != ps::Node::kEmpty) entry["rank"] = ps::Postoffice::IDtoRank(id);
      out["customers"].push_back(std::move(entry));
    }
  }
  // "enabled": configured (LIBRA_SWITCH); "active": the controller's INSTALL
  // turned the hot path on for this node, else "plain_reason" says why not.
  out["enabled"] = true;
  if (install) {
    out["active"] = install->enabled;
    if (!install->enabled) out["plain_reason"] = install->reason;
  }
  out["mode"] = Config().sampling() ? "sampling" : "file";
  out["first_hot_epoch"] = Config().first_hot_epoch();
  if (controller_) out["cost_model"] = controller_->CostReport();
  out["control"] = {{"notices_sent", control_counters_.notices_sent.load()},
                    {"notices_received", control_counters_.notices_received.load()},
                    {"answers_received", control_counters_.answers_received.load()}};
  return out;
}

}  // namespace libra::hotpath
