// The Postoffice is the process-wide view of the job: who this node is, the
// other nodes and groups, server key ranges, customers, and barriers.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "ps/base.h"
#include "ps/internal/customer.h"
#include "ps/internal/van.h"
#include "ps/range.h"

namespace ps {

class Postoffice {
 public:
  static Postoffice* Get();

  Van* van() { return van_.get(); }

  // Starts the van on the first call (reading the DMLC_* environment). On a
  // worker, each customer that calls Start is a worker of the job (PS-lite's
  // customers as workers: DMLC_NUM_WORKER counts them); waits until every
  // node registered, then optionally at a barrier of all nodes.
  void Start(int customer_id, const char* argv0, bool do_barrier);
  // Optionally waits at a barrier of all nodes; the call for customer 0
  // runs the exit callback and stops the van.
  void Finalize(int customer_id, bool do_barrier = true);

  void AddCustomer(Customer* customer);
  void RemoveCustomer(Customer* customer);
  // The customer, waiting up to timeout_ms for it to be created; nullptr if none.
  Customer* GetCustomer(int app_id, int customer_id, int timeout_ms = 0) const;

  // Node ids of a group (kServerGroup, kWorkerGroup + kServerGroup, ...) or
  // of a single node id.
  const std::vector<int>& GetNodeIDs(int node_id);
  // Key range owned by each server: [0, kMaxKey) split evenly by rank.
  const std::vector<Range>& GetServerKeyRanges();

  using Callback = std::function<void()>;
  void RegisterExitCallback(const Callback& cb) { exit_callback_ = cb; }

  static int WorkerRankToID(int rank) { return rank * 2 + 9; }
  static int ServerRankToID(int rank) { return rank * 2 + 8; }
  static int IDtoRank(int id) { return id < 8 ? 0 : (id - 8) / 2; }

  // These read the DMLC_* environment on first use, so they work before
  // Start (PS-lite programs create their KVServer before Start).
  int num_workers() { return Env().num_workers; }
  int num_servers() { return Env().num_servers; }
  int my_rank() const { return IDtoRank(van_->my_node().id); }
  bool is_worker() { return Env().is_worker; }
  bool is_server() { return Env().is_server; }
  bool is_scheduler() { return Env().is_scheduler; }
  int verbose() { return Env().verbose; }
  // Whether this node replaces a dead one. Never: Libra stops the job when a
  // node dies (docs/runtime.md), so no node joins a running job.
  bool is_recovery() const { return false; }

  // Blocks until every node of `node_group` has called Barrier (as in
  // PS-lite, counted per group whatever the customer: a process whose
  // customers are workers calls it once per customer).
  void Barrier(int customer_id, int node_group);
  // Called by the van when the scheduler releases a barrier of the group:
  // every customer waiting in it goes on.
  void ReleaseBarrier(int node_group);

 private:
  Postoffice() = default;

  // The job as the DMLC_* variables describe it.
  struct JobEnvironment {
    int num_workers = 0;
    int num_servers = 0;
    bool is_worker = false;
    bool is_server = false;
    bool is_scheduler = false;
    int verbose = 0;
    std::unordered_map<int, std::vector<int>> node_ids;  // group or id -> node ids
  };
  const JobEnvironment& Env();
  static JobEnvironment ReadEnvironment();

  std::unique_ptr<Van> van_;
  std::mutex start_mu_;
  int started_customers_ = 0;
  bool van_started_ = false;

  mutable std::mutex customers_mu_;
  mutable std::condition_variable customers_cond_;
  std::map<std::pair<int, int>, Customer*> customers_;

  std::once_flag env_once_;
  JobEnvironment env_;
  std::vector<Range> server_key_ranges_;
  std::mutex ranges_mu_;

  std::mutex barrier_mu_;
  std::condition_variable barrier_cond_;
  std::map<int, uint64_t> barriers_released_;  // per group

  Callback exit_callback_;
};

}  // namespace ps

// LOG(INFO) when PS_VERBOSE is at least v; the message is not even built
// otherwise.
#define PS_VLOG(v) LOG_IF(INFO, (v) <= ::ps::Postoffice::Get()->verbose())
