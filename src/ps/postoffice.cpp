#include "ps/internal/postoffice.h"

#include <algorithm>
#include <chrono>

#include "ps/allocator_tuning.h"
#include "ps/internal/env.h"
#include "ps/internal/hot_path_hooks.h"

namespace ps {

Postoffice* Postoffice::Get() {
  static Postoffice postoffice;
  return &postoffice;
}

Postoffice::JobEnvironment Postoffice::ReadEnvironment() {
  Environment* vars = Environment::Get();
  JobEnvironment env;
  env.num_workers = vars->RequiredInt("DMLC_NUM_WORKER", 1, 1 << 14);
  env.num_servers = vars->RequiredInt("DMLC_NUM_SERVER", 1, 1 << 14);
  std::string role = vars->RequiredString("DMLC_ROLE");
  env.is_worker = role == "worker";
  env.is_server = role == "server";
  env.is_scheduler = role == "scheduler";
  if (!env.is_worker && !env.is_server && !env.is_scheduler) {
    LOG(FATAL) << "environment variable DMLC_ROLE='" << role
               << "' must be worker, server or scheduler";
  }
  env.verbose = vars->IntOr("PS_VERBOSE", 0, 0, 3);

  // Groups are sums of kScheduler, kServerGroup and kWorkerGroup; single node
  // ids map to themselves.
  for (int group = 1; group <= kScheduler + kServerGroup + kWorkerGroup; ++group) {
    std::vector<int>& ids = env.node_ids[group];
    if (group & kScheduler) ids.push_back(kScheduler);
    if (group & kServerGroup) {
      for (int r = 0; r < env.num_servers; ++r) ids.push_back(ServerRankToID(r));
    }
    if (group & kWorkerGroup) {
      for (int r = 0; r < env.num_workers; ++r) ids.push_back(WorkerRankToID(r));
    }
  }
  for (int r = 0; r < env.num_servers; ++r) env.node_ids[ServerRankToID(r)] = {ServerRankToID(r)};
  for (int r = 0; r < env.num_workers; ++r) env.node_ids[WorkerRankToID(r)] = {WorkerRankToID(r)};
  return env;
}

const Postoffice::JobEnvironment& Postoffice::Env() {
  std::call_once(env_once_, [this] { env_ = ReadEnvironment(); });
  return env_;
}

void Postoffice::Start(int customer_id, const char* /*argv0*/, bool do_barrier) {
  {
    std::lock_guard<std::mutex> lock(start_mu_);
    if (!van_) {
      Env();
      TuneAllocatorForLargeMessages();  // before ZeroMQ starts its I/O threads
      const char* type = Environment::Get()->find("DMLC_PS_VAN_TYPE");
      bool local = Environment::Get()->IntOr("DMLC_LOCAL", 0, 0, 1) == 1;
      van_ = std::make_unique<Van>(CreateTransport(type ? type : "zmq", local));
      van_->Start();
    }
  }
  // Not under the lock: the customers of a worker that are workers register
  // from their own threads, and the job is complete only once all have.
  van_->Register(customer_id);
  van_->WaitUntilReady();
  {
    std::lock_guard<std::mutex> lock(start_mu_);
    if (!van_started_) {
      van_started_ = true;
      hot_path_hooks::OnStart();
    }
    ++started_customers_;
  }
  if (do_barrier) Barrier(customer_id, kWorkerGroup + kServerGroup + kScheduler);
}

void Postoffice::Finalize(int customer_id, bool do_barrier) {
  if (customer_id == 0) {
    // Requests that wait for a handle the application never set get the
    // default now (simple_app.h); the others' barrier may wait for them.
    std::lock_guard<std::mutex> lock(customers_mu_);
    for (const auto& [key, customer] : customers_) customer->OnFinalize();
  }
  // Libra: the customer's worker waits until the servers applied all it
  // pushed (each customer that is a worker of its own, before its barrier).
  hot_path_hooks::BeforeFinalBarrier(customer_id);
  if (do_barrier) Barrier(customer_id, kWorkerGroup + kServerGroup + kScheduler);
  if (customer_id == 0) {
    if (exit_callback_) exit_callback_();
    hot_path_hooks::OnFinalize();
    van_->Stop();
  }
}

void Postoffice::AddCustomer(Customer* customer) {
  {
    std::lock_guard<std::mutex> lock(customers_mu_);
    auto key = std::make_pair(customer->app_id(), customer->customer_id());
    CHECK(customers_.count(key) == 0)
        << "customer " << key.second << " of app " << key.first << " already exists";
    customers_[key] = customer;
    customers_cond_.notify_all();
  }
  if (van_) van_->DeliverParked(customer->app_id(), customer->customer_id());
}

void Postoffice::RemoveCustomer(Customer* customer) {
  std::lock_guard<std::mutex> lock(customers_mu_);
  customers_.erase(std::make_pair(customer->app_id(), customer->customer_id()));
}

Customer* Postoffice::GetCustomer(int app_id, int customer_id, int timeout_ms) const {
  std::unique_lock<std::mutex> lock(customers_mu_);
  auto key = std::make_pair(app_id, customer_id);
  customers_cond_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                           [&] { return customers_.count(key) > 0; });
  auto it = customers_.find(key);
  return it == customers_.end() ? nullptr : it->second;
}

const std::vector<int>& Postoffice::GetNodeIDs(int node_id) {
  auto it = Env().node_ids.find(node_id);
  CHECK(it != Env().node_ids.end()) << "unknown node or group id " << node_id;
  return it->second;
}

const std::vector<Range>& Postoffice::GetServerKeyRanges() {
  std::lock_guard<std::mutex> lock(ranges_mu_);
  if (server_key_ranges_.empty()) {
    const int n = num_servers();
    for (int i = 0; i < n; ++i) {
      Key begin = kMaxKey / n * i;
      Key end = i + 1 == n ? kMaxKey : kMaxKey / n * (i + 1);
      server_key_ranges_.emplace_back(begin, end);
    }
  }
  return server_key_ranges_;
}

void Postoffice::Barrier(int customer_id, int node_group) {
  if (GetNodeIDs(node_group).size() <= 1) return;
  int role_group = is_scheduler() ? kScheduler : is_server() ? kServerGroup : kWorkerGroup;
  CHECK(node_group & role_group) << "this node is not in barrier group " << node_group;
  uint64_t released;
  {
    std::lock_guard<std::mutex> lock(barrier_mu_);
    released = barriers_released_[node_group];
  }
  Message req;
  req.meta.recver = kScheduler;
  req.meta.request = true;
  req.meta.customer_id = customer_id;
  req.meta.app_id = 0;
  req.meta.control.cmd = Control::BARRIER;
  req.meta.control.barrier_group = node_group;
  van_->Send(req);
  // The scheduler releases it only once this request is counted, so the
  // release to wait for is the next one of the group.
  std::unique_lock<std::mutex> lock(barrier_mu_);
  barrier_cond_.wait(lock, [&] { return barriers_released_[node_group] > released; });
}

void Postoffice::ReleaseBarrier(int node_group) {
  {
    std::lock_guard<std::mutex> lock(barrier_mu_);
    ++barriers_released_[node_group];
  }
  barrier_cond_.notify_all();
}

}  // namespace ps
