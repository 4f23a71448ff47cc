// The entry point of the PS-lite-compatible API: start and stop the node
// this process plays (scheduler, server or worker, from DMLC_ROLE) and ask
// about the job.
#pragma once

#include <functional>

#include "ps/base.h"
#include "ps/internal/env.h"
#include "ps/internal/postoffice.h"
#include "ps/kv_app.h"
#include "ps/simple_app.h"

namespace ps {

inline int NumWorkers() { return Postoffice::Get()->num_workers(); }
inline int NumServers() { return Postoffice::Get()->num_servers(); }
inline bool IsWorker() { return Postoffice::Get()->is_worker(); }
inline bool IsServer() { return Postoffice::Get()->is_server(); }
inline bool IsScheduler() { return Postoffice::Get()->is_scheduler(); }
// This node's rank among the nodes of its role, in [0, NumWorkers()) or [0, NumServers()).
inline int MyRank() { return Postoffice::Get()->my_rank(); }

// The exit status of a node that cannot start: a DMLC_*, PS_* or LIBRA_*
// variable is missing or malformed (DMLC_ROLE=foo, DMLC_PS_ROOT_PORT=70000,
// an unknown host...), or its port cannot be bound. EX_CONFIG of <sysexits.h>.
static const int kStartFailedExitStatus = 78;

namespace internal {
// Postoffice::Start, or, if it throws (a bad setting), exit with
// kStartFailedExitStatus after the message (src/ps/start.cpp says why).
void StartOrExit(int customer_id, const char* argv0, bool do_barrier);
}  // namespace internal

// Starts this node without waiting for the others. A node that cannot start
// says why on stderr and exits with kStartFailedExitStatus.
inline void StartAsync(int customer_id = 0, const char* argv0 = nullptr) {
  internal::StartOrExit(customer_id, argv0, false);
}
// Starts this node and waits until every node has started (exits like
// StartAsync if it cannot start).
inline void Start(int customer_id = 0, const char* argv0 = nullptr) {
  internal::StartOrExit(customer_id, argv0, true);
}
// Stops this node, by default after a barrier of all nodes.
inline void Finalize(int customer_id = 0, const bool do_barrier = true) {
  Postoffice::Get()->Finalize(customer_id, do_barrier);
}
// Runs `cb` when the node stops (before the van shuts down).
inline void RegisterExitCallback(const std::function<void()>& cb) {
  Postoffice::Get()->RegisterExitCallback(cb);
}

}  // namespace ps
