// The switch's control plane: the requests the controller sends (as JSON on
// switchd's control port) and their effect on the program. Kept apart from
// the transport so it is testable in process.
//
// Requests: {"op": "install_job", "job": {...}}, {"op": "remove_job",
// "job_id": J, "token": T}, {"op": "counters"}, {"op": "probe"}. Replies
// carry "ok": true, or "ok": false and "error". Changing or removing an
// installed job needs its token; counters and probe are read-only and open.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

#include "dataplane/program.h"

namespace libra::switchd {

// What the I/O loop around the program counts.
struct IoCounters {
  std::uint64_t datagrams_received = 0;
  std::uint64_t datagrams_sent = 0;
  std::uint64_t ingress_loss_injected = 0;
  std::uint64_t egress_loss_injected = 0;
  std::uint64_t send_refused = 0;
};

nlohmann::json CountersToJson(const dataplane::Program& program, const IoCounters& io);

nlohmann::json HandleControlRequest(const nlohmann::json& request, dataplane::Program& program,
                                    const IoCounters& io);

}  // namespace libra::switchd
