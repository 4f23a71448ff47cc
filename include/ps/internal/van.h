// The Van runs the cluster protocol on top of a Transport: registration with
// the scheduler, node ids, barriers, heartbeats and failure detection, and
// delivery of application messages to their Customer.
//
// Failure handling (a PS-lite pain point): every node sends a heartbeat to
// the scheduler each PS_HEARTBEAT_INTERVAL seconds (default 1) and the
// scheduler answers. A node silent for PS_HEARTBEAT_TIMEOUT seconds (default
// 10) is declared dead: the scheduler tells every other node to abort with a
// message naming it, and exits with status 1. A node that hears nothing from
// the scheduler for that long exits the same way. Start-up waits at most
// PS_START_TIMEOUT seconds (default 120) for all nodes to register.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>
#include <vector>

#include "ps/internal/message.h"
#include "ps/internal/transport.h"

namespace ps {

class Van {
 public:
  explicit Van(std::unique_ptr<Transport> transport);
  ~Van();

  // Binds and starts receiving.
  void Start();
  // Registers with the scheduler: on a worker once per customer that calls
  // Start (each is a worker, as in PS-lite), on a server once.
  void Register(int customer_id);
  // Blocks until every node is known (then heartbeats start).
  void WaitUntilReady();
  // Says goodbye to the scheduler and stops all threads.
  void Stop();

  // Sends `msg` (sender filled in). Returns the bytes sent.
  int Send(Message& msg);

  const Node& my_node() const { return my_node_; }
  const Node& scheduler() const { return scheduler_; }
  // The node with id `id` (empty Node if unknown).
  Node GetNode(int id) const;
  // Worker, once the job is complete: the node id of customer `customer_id`
  // as a worker of its own (customers as workers). The process's ids,
  // ascending, belong to its registered customers, ascending, so the first
  // (the process's own) is its lowest customer's. Node::kEmpty when that
  // customer did not register before the job was complete (it is no worker).
  int WorkerIdOfCustomer(int customer_id) const;
  // The inverse: the customer whose worker id `id` is, or -1 when `id` is
  // not one of this process's worker ids.
  int CustomerOfWorkerId(int id) const;

  // Hands messages that arrived before their customer existed to it.
  void DeliverParked(int app_id, int customer_id);

  uint64_t bytes_sent() const { return bytes_sent_; }
  uint64_t bytes_received() const { return bytes_received_; }

 private:
  void Receiving();
  void HandleAddNode(const Message& msg);
  void SchedulerAddNode(const Message& msg);
  void HandleBarrier(const Message& msg);
  void HandleHeartbeat(const Message& msg);
  void HandleExit(const Message& msg);
  void Deliver(const Message& msg);
  void Heartbeating();
  void WatchHeartbeats();
  [[noreturn]] void AbortJob(const std::string& why);
  int CustomerFor(const Message& msg) const;
  // This process's worker ids, ascending (under nodes_mu_).
  std::vector<int> OwnWorkerIdsLocked() const;
  void SendControl(int recver, Control::Command cmd, const std::string& body = "");

  std::unique_ptr<Transport> transport_;
  Node my_node_;
  Node scheduler_;
  std::atomic<bool> ready_{false};
  std::atomic<bool> stopping_{false};
  std::thread receiver_thread_;
  std::thread heartbeat_thread_;
  std::once_flag heartbeat_once_;

  mutable std::mutex nodes_mu_;
  std::condition_variable ready_cond_;
  std::unordered_map<int, Node> nodes_;      // id -> node, all registered nodes
  std::vector<Node> pending_registrations_;  // scheduler, before all arrived

  std::set<int> registered_customers_;  // worker: customers registered as workers
  // Scheduler: ids that share a process with a lower id (customers as workers).
  std::set<int> shared_ids_;
  // Scheduler: barrier requests per group; when each process was last heard.
  std::map<int, int> barrier_count_;
  std::mutex heartbeat_mu_;
  std::condition_variable heartbeat_cond_;
  std::unordered_map<int, std::chrono::steady_clock::time_point> last_heard_;
  std::chrono::steady_clock::time_point scheduler_last_heard_;
  int heartbeat_interval_s_ = 1;
  int heartbeat_timeout_s_ = 10;
  int start_timeout_s_ = 120;

  // Application messages whose customer is not created yet, in arrival order.
  std::mutex parked_mu_;
  std::vector<Message> parked_;

  std::atomic<uint64_t> bytes_sent_{0};
  std::atomic<uint64_t> bytes_received_{0};
};

}  // namespace ps
