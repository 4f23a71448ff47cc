#include "ps/internal/van.h"

#include <pthread.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <set>

#include "ps/internal/env.h"
#include "ps/internal/postoffice.h"
#include "ps/network_utils.h"

namespace ps {

namespace {

using Clock = std::chrono::steady_clock;

// Ends the process at once with a clear message. Used when the job cannot go
// on (a node died, the scheduler is gone): unwinding threads that are blocked
// in the application could hang, which is what this exists to prevent.
[[noreturn]] void Die(const std::string& why) {
  std::cerr << "libra: fatal: " << why << std::endl;
  std::fflush(nullptr);
  std::_Exit(1);
}

std::string DescribeNode(const Node& node) {
  std::string s = RoleName(node.role);
  if (node.role != Node::SCHEDULER && node.id != Node::kEmpty) {
    s += " " + std::to_string(Postoffice::IDtoRank(node.id));
  }
  return s + " (id " + std::to_string(node.id) + ", " + node.hostname + ":" +
         std::to_string(node.port) + ")";
}

}  // namespace

Van::Van(std::unique_ptr<Transport> transport) : transport_(std::move(transport)) {}

Van::~Van() { Stop(); }

void Van::Start() {
  Environment* env = Environment::Get();
  Postoffice* po = Postoffice::Get();
  std::string root = env->RequiredString("DMLC_PS_ROOT_URI");
  scheduler_.hostname = ResolveHost(root);
  if (scheduler_.hostname.empty()) {
    LOG(FATAL) << "environment variable DMLC_PS_ROOT_URI='" << root
               << "' is not an IPv4 address or known host name";
  }
  scheduler_.port = env->RequiredInt("DMLC_PS_ROOT_PORT", 1, 65535);
  scheduler_.role = Node::SCHEDULER;
  scheduler_.id = kScheduler;
  heartbeat_interval_s_ = env->IntOr("PS_HEARTBEAT_INTERVAL", 1, 1, 3600);
  heartbeat_timeout_s_ = env->IntOr("PS_HEARTBEAT_TIMEOUT", 10, 1, 86400);
  start_timeout_s_ = env->IntOr("PS_START_TIMEOUT", 120, 1, 86400);

  if (po->is_scheduler()) {
    my_node_ = scheduler_;
  } else {
    my_node_.role = po->is_server() ? Node::SERVER : Node::WORKER;
    const char* host = env->find("DMLC_NODE_HOST");
    const char* interface = env->find("DMLC_INTERFACE");
    if (host && *host) {
      my_node_.hostname = host;
    } else if (interface && *interface) {
      my_node_.hostname = InterfaceAddress(interface);
      if (my_node_.hostname.empty()) {
        LOG(FATAL) << "environment variable DMLC_INTERFACE='"
                   << interface << "' names no interface with an IPv4 address";
      }
    } else if (IsLoopbackAddress(scheduler_.hostname)) {
      my_node_.hostname = "127.0.0.1";
    } else {
      my_node_.hostname = FirstExternalAddress();
      if (my_node_.hostname.empty()) my_node_.hostname = "127.0.0.1";
    }
    my_node_.port = env->IntOr("DMLC_NODE_PORT", Node::kEmpty, 1, 65535);
    my_node_.rank_hint = env->IntOr("LIBRA_RANK", Node::kEmpty, 0, 1 << 14);
  }
  my_node_.port = transport_->Bind(my_node_);
  if (po->is_scheduler()) scheduler_.port = my_node_.port;
  transport_->Connect(scheduler_);
  scheduler_last_heard_ = Clock::now();
  receiver_thread_ = std::thread(&Van::Receiving, this);
  if (po->verbose()) LOG(INFO) << "started " << my_node_.ShortDebugString();
}

// As in PS-lite, every customer of a worker that calls Start registers as a
// worker of its own (a process may so be several workers); a server
// registers once.
void Van::Register(int customer_id) {
  Postoffice* po = Postoffice::Get();
  if (po->is_scheduler()) return;
  {
    std::lock_guard<std::mutex> lock(nodes_mu_);
    if (ready_) return;  // the job is complete: a later Start is only a barrier
    if (po->is_server() && !registered_customers_.empty()) return;
    if (!registered_customers_.insert(customer_id).second) return;
  }
  Message msg;
  msg.meta.recver = kScheduler;
  msg.meta.request = true;
  msg.meta.customer_id = customer_id;
  msg.meta.control.cmd = Control::ADD_NODE;
  msg.meta.control.node.push_back(my_node_);
  Send(msg);
}

void Van::WaitUntilReady() {
  Postoffice* po = Postoffice::Get();
  {
    std::unique_lock<std::mutex> lock(nodes_mu_);
    bool ok = ready_cond_.wait_for(lock, std::chrono::seconds(start_timeout_s_),
                                   [this] { return ready_.load(); });
    if (!ok) {
      if (po->is_scheduler()) {
        Die("timed out after " + std::to_string(start_timeout_s_) +
            " s (PS_START_TIMEOUT): " + std::to_string(pending_registrations_.size()) + " of " +
            std::to_string(po->num_workers() + po->num_servers()) + " nodes registered");
      }
      Die("timed out after " + std::to_string(start_timeout_s_) +
          " s (PS_START_TIMEOUT) waiting for the scheduler at " + scheduler_.hostname + ":" +
          std::to_string(scheduler_.port) + " to register all nodes");
    }
  }
  std::call_once(heartbeat_once_, [this, po] {
    heartbeat_thread_ =
        std::thread(po->is_scheduler() ? &Van::WatchHeartbeats : &Van::Heartbeating, this);
  });
}

void Van::Stop() {
  if (ready_ && Postoffice::Get()->is_scheduler()) {
    // Leave last: wait for every node's EXIT, so none of them waits on a
    // message to a scheduler that is gone. A node that never says goodbye
    // is caught by the heartbeat watcher meanwhile.
    std::unique_lock<std::mutex> lock(heartbeat_mu_);
    heartbeat_cond_.wait_for(lock, std::chrono::seconds(heartbeat_timeout_s_ + 1),
                             [this] { return last_heard_.empty(); });
  }
  if (stopping_.exchange(true)) return;
  if (ready_ && !Postoffice::Get()->is_scheduler()) SendControl(kScheduler, Control::EXIT);
  heartbeat_cond_.notify_all();
  if (heartbeat_thread_.joinable()) heartbeat_thread_.join();
  transport_->Stop();
  if (receiver_thread_.joinable()) receiver_thread_.join();
}

int Van::Send(Message& msg) {
  msg.meta.sender = my_node_.id;
  int bytes = transport_->SendMsg(msg);
  if (bytes > 0) bytes_sent_ += bytes;
  if (Postoffice::Get()->verbose() >= 2) LOG(INFO) << "send " << msg.DebugString();
  return bytes;
}

void Van::SendControl(int recver, Control::Command cmd, const std::string& body) {
  Message msg;
  msg.meta.recver = recver;
  msg.meta.request = true;
  msg.meta.body = body;
  msg.meta.control.cmd = cmd;
  Send(msg);
}

Node Van::GetNode(int id) const {
  std::lock_guard<std::mutex> lock(nodes_mu_);
  auto it = nodes_.find(id);
  return it == nodes_.end() ? Node() : it->second;
}

std::vector<int> Van::OwnWorkerIdsLocked() const {
  std::vector<int> ids;
  if (!ready_ || my_node_.role != Node::WORKER) return ids;
  for (const auto& [id, n] : nodes_) {
    if (n.role == Node::WORKER && n.hostname == my_node_.hostname && n.port == my_node_.port) {
      ids.push_back(id);
    }
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

int Van::WorkerIdOfCustomer(int customer_id) const {
  std::lock_guard<std::mutex> lock(nodes_mu_);
  const std::vector<int> ids = OwnWorkerIdsLocked();
  auto it = registered_customers_.find(customer_id);
  if (it == registered_customers_.end()) return Node::kEmpty;
  const size_t index = static_cast<size_t>(std::distance(registered_customers_.begin(), it));
  return index < ids.size() ? ids[index] : Node::kEmpty;
}

int Van::CustomerOfWorkerId(int id) const {
  std::lock_guard<std::mutex> lock(nodes_mu_);
  const std::vector<int> ids = OwnWorkerIdsLocked();
  auto at = std::find(ids.begin(), ids.end(), id);
  const size_t index = static_cast<size_t>(at - ids.begin());
  if (at == ids.end() || index >= registered_customers_.size()) return -1;
  return *std::next(registered_customers_.begin(), static_cast<std::ptrdiff_t>(index));
}

void Van::Receiving() {
  // Named for top -H and perf (at most 15 characters).
  pthread_setname_np(pthread_self(), "ps-van-recv");
  while (true) {
    Message msg;
    int bytes = transport_->RecvMsg(&msg);
    if (bytes < 0) break;      // stopped
    if (bytes == 0) continue;  // malformed, dropped by the transport
    bytes_received_ += bytes;
    if (Postoffice::Get()->verbose() >= 2) LOG(INFO) << "recv " << msg.DebugString();

    switch (msg.meta.control.cmd) {
      case Control::EMPTY:
        Deliver(msg);
        break;
      case Control::TERMINATE:
        return;
      case Control::ADD_NODE:
        if (Postoffice::Get()->is_scheduler()) {
          SchedulerAddNode(msg);
        } else {
          HandleAddNode(msg);
        }
        break;
      case Control::BARRIER:
        HandleBarrier(msg);
        break;
      case Control::HEARTBEAT:
        HandleHeartbeat(msg);
        break;
      case Control::EXIT:
        HandleExit(msg);
        break;
      case Control::ABORT:
        Die("the job was stopped by the scheduler: " + msg.meta.body);
    }
  }
}

// Scheduler: collects registrations; once every node is in, assigns ids
// (by LIBRA_RANK when every node of a role gave a distinct one, otherwise in
// arrival order) and sends the full node list to every process. Several
// registrations from one process (customers as workers) are one process: the
// first id is the process's, the others share its address.
void Van::SchedulerAddNode(const Message& msg) {
  Postoffice* po = Postoffice::Get();
  std::lock_guard<std::mutex> lock(nodes_mu_);
  if (ready_ || msg.meta.control.node.size() != 1) {
    LOG(WARNING) << "ignored a registration after start-up: " << msg.DebugString();
    return;
  }
  pending_registrations_.push_back(msg.meta.control.node[0]);
  if (static_cast<int>(pending_registrations_.size()) < po->num_workers() + po->num_servers()) {
    return;
  }

  std::vector<Node> all{scheduler_};
  for (Node::Role role : {Node::SERVER, Node::WORKER}) {
    std::vector<Node> group;
    for (const Node& n : pending_registrations_) {
      if (n.role == role) group.push_back(n);
    }
    int expected = role == Node::SERVER ? po->num_servers() : po->num_workers();
    if (static_cast<int>(group.size()) != expected) {
      Die("registered " + std::to_string(group.size()) + " " + RoleName(role) + "s, expected " +
          std::to_string(expected) + " (check DMLC_NUM_WORKER / DMLC_NUM_SERVER)");
    }
    std::vector<int> hints;
    for (const Node& n : group) hints.push_back(n.rank_hint);
    std::sort(hints.begin(), hints.end());
    bool use_hints = hints.front() == 0 && hints.back() == expected - 1 &&
                     std::adjacent_find(hints.begin(), hints.end()) == hints.end();
    if (use_hints) {
      std::sort(group.begin(), group.end(),
                [](const Node& a, const Node& b) { return a.rank_hint < b.rank_hint; });
    }
    for (int rank = 0; rank < expected; ++rank) {
      group[rank].id = role == Node::SERVER ? Postoffice::ServerRankToID(rank)
                                            : Postoffice::WorkerRankToID(rank);
      all.push_back(group[rank]);
    }
  }

  std::set<std::string> processes;
  for (const Node& n : all) {
    const std::string address =
        std::to_string(n.role) + " " + n.hostname + ":" + std::to_string(n.port);
    if (n.id != kScheduler && !processes.insert(address).second) shared_ids_.insert(n.id);
  }

  Message reply;
  reply.meta.request = false;
  reply.meta.control.cmd = Control::ADD_NODE;
  reply.meta.control.node = all;
  auto now = Clock::now();
  {
    std::lock_guard<std::mutex> hb_lock(heartbeat_mu_);
    for (const Node& n : all) {
      nodes_[n.id] = n;
      if (n.id == kScheduler) continue;
      transport_->Connect(n);
      if (!shared_ids_.count(n.id)) last_heard_[n.id] = now;  // the process heartbeats
    }
  }
  for (const Node& n : all) {
    if (n.id == kScheduler || shared_ids_.count(n.id)) continue;
    reply.meta.recver = n.id;
    Send(reply);
  }
  if (po->verbose()) LOG(INFO) << "all " << all.size() - 1 << " nodes registered";
  ready_ = true;
  ready_cond_.notify_all();
}

// Worker or server: learns its id and every other node from the scheduler.
// A process that registered several workers has several ids; its own is the
// first (the others are its customers' as workers).
void Van::HandleAddNode(const Message& msg) {
  std::lock_guard<std::mutex> lock(nodes_mu_);
  if (ready_) return;
  for (const Node& n : msg.meta.control.node) {
    nodes_[n.id] = n;
    if (n.hostname == my_node_.hostname && n.port == my_node_.port && n.role == my_node_.role &&
        (my_node_.id == Node::kEmpty || n.id < my_node_.id)) {
      my_node_.id = n.id;
    }
  }
  CHECK_NE(my_node_.id, Node::kEmpty)
      << "the scheduler's node list does not contain " << my_node_.ShortDebugString();
  for (const auto& [id, node] : nodes_) {
    if (id != kScheduler) transport_->Connect(node);
  }
  ready_ = true;
  ready_cond_.notify_all();
}

// Scheduler: a barrier of a group is complete when it has as many requests
// as the group has members (as in PS-lite, whichever customer sent them: a
// process that is several workers sends one per worker); the release goes
// once to every process of the group.
void Van::HandleBarrier(const Message& msg) {
  int group = msg.meta.control.barrier_group;
  if (!msg.meta.request) {
    Postoffice::Get()->ReleaseBarrier(group);
    return;
  }
  const std::vector<int>& members = Postoffice::Get()->GetNodeIDs(group);
  int& count = barrier_count_[group];
  if (++count < static_cast<int>(members.size())) return;
  count = 0;
  Message release;
  release.meta.request = false;
  release.meta.customer_id = msg.meta.customer_id;
  release.meta.app_id = 0;
  release.meta.control.cmd = Control::BARRIER;
  release.meta.control.barrier_group = group;
  for (int id : members) {
    if (shared_ids_.count(id)) continue;  // that process has its release already
    release.meta.recver = id;
    Send(release);
  }
}

void Van::HandleHeartbeat(const Message& msg) {
  std::lock_guard<std::mutex> lock(heartbeat_mu_);
  if (!Postoffice::Get()->is_scheduler()) {
    scheduler_last_heard_ = Clock::now();
    return;
  }
  auto it = last_heard_.find(msg.meta.sender);
  if (it == last_heard_.end()) return;  // already exited
  it->second = Clock::now();
  Message reply;
  reply.meta.recver = msg.meta.sender;
  reply.meta.request = false;
  reply.meta.control.cmd = Control::HEARTBEAT;
  Send(reply);
}

void Van::HandleExit(const Message& msg) {
  std::lock_guard<std::mutex> lock(heartbeat_mu_);
  last_heard_.erase(msg.meta.sender);
  heartbeat_cond_.notify_all();
}

int Van::CustomerFor(const Message& msg) const {
  // Servers and the scheduler own one customer per app (its id is the app id);
  // a worker may run several customers of one app.
  return Postoffice::Get()->is_worker() ? msg.meta.customer_id : msg.meta.app_id;
}

void Van::Deliver(const Message& msg) {
  std::lock_guard<std::mutex> lock(parked_mu_);
  Customer* customer = Postoffice::Get()->GetCustomer(msg.meta.app_id, CustomerFor(msg));
  if (customer == nullptr) {
    parked_.push_back(msg);  // its KVServer/KVWorker is not created yet
    return;
  }
  customer->Accept(msg);
}

void Van::DeliverParked(int app_id, int customer_id) {
  std::lock_guard<std::mutex> lock(parked_mu_);
  Customer* customer = Postoffice::Get()->GetCustomer(app_id, customer_id);
  if (customer == nullptr) return;
  auto it = std::stable_partition(parked_.begin(), parked_.end(), [&](const Message& m) {
    return !(m.meta.app_id == app_id && CustomerFor(m) == customer_id);
  });
  for (auto m = it; m != parked_.end(); ++m) customer->Accept(*m);
  parked_.erase(it, parked_.end());
}

void Van::Heartbeating() {
  pthread_setname_np(pthread_self(), "ps-heartbeat");
  std::unique_lock<std::mutex> lock(heartbeat_mu_);
  while (!stopping_) {
    heartbeat_cond_.wait_for(lock, std::chrono::seconds(heartbeat_interval_s_));
    if (stopping_) break;
    auto silent = Clock::now() - scheduler_last_heard_;
    if (silent > std::chrono::seconds(heartbeat_timeout_s_)) {
      Die("the scheduler (" + scheduler_.hostname + ":" + std::to_string(scheduler_.port) +
          ") has not answered heartbeats for " + std::to_string(heartbeat_timeout_s_) +
          " s; stopping " + DescribeNode(my_node_));
    }
    lock.unlock();
    SendControl(kScheduler, Control::HEARTBEAT);
    lock.lock();
  }
}

void Van::WatchHeartbeats() {
  pthread_setname_np(pthread_self(), "ps-heartbeats");
  while (true) {
    int dead_id = Node::kEmpty;
    {
      std::unique_lock<std::mutex> lock(heartbeat_mu_);
      heartbeat_cond_.wait_for(lock, std::chrono::milliseconds(500));
      if (stopping_) return;
      auto now = Clock::now();
      for (const auto& [id, heard] : last_heard_) {
        if (now - heard > std::chrono::seconds(heartbeat_timeout_s_)) dead_id = id;
      }
    }
    if (dead_id != Node::kEmpty) {
      AbortJob(DescribeNode(GetNode(dead_id)) + " sent no heartbeat for " +
               std::to_string(heartbeat_timeout_s_) + " s (PS_HEARTBEAT_TIMEOUT)");
    }
  }
}

void Van::AbortJob(const std::string& why) {
  std::cerr << "libra: fatal: " << why << "; stopping the job" << std::endl;
  std::vector<int> alive;
  {
    std::lock_guard<std::mutex> lock(heartbeat_mu_);
    for (const auto& [id, heard] : last_heard_) alive.push_back(id);
  }
  for (int id : alive) SendControl(id, Control::ABORT, why);
  // Give the transport a moment to put the ABORTs on the wire.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  std::fflush(nullptr);
  std::_Exit(1);
}

}  // namespace ps
