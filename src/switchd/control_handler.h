// The switch's control plane: the requests the controller sends (as JSON on
// switchd's control port) and their effect on the program. Kept apart from
// the transport so it is testable in process.
//
// Requests: {"op": "install_job", "job": {...}}, {"op": "remove_job",
// "job_id": J, "token": T}, {"op": "counters"}, {"op": "probe"}. Replies
// carry "ok": true, or "ok": false and "error". Changing or removing an
// installed job needs its token; counters and probe are read-only and open.
// A token that is a well-known default ("libra", the runtime's old default)
// authorises nothing: anyone could guess it.
//
// The control port faces whoever can reach it, so nothing a client sends may
// stop the switch: every request, however malformed, gets a reply and is
// counted ("control" in the counters): one larger than
// kMaxControlRequestBytes is refused unparsed, and ZeroMQ drops one larger
// than kMaxControlFrameBytes unread, disconnecting its sender
// (switch_daemon.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "dataplane/program.h"

namespace libra::switchd {

// What the I/O loop around the program counts.
struct IoCounters {
  std::uint64_t datagrams_received = 0;
  std::uint64_t datagrams_sent = 0;
  std::uint64_t ingress_loss_injected = 0;
  std::uint64_t egress_loss_injected = 0;
  std::uint64_t send_refused = 0;
  // Control requests: all of them; those that were no request at all (not one
  // frame, not JSON, not UTF-8, not an object with an 'op'); those refused.
  std::uint64_t control_requests = 0;
  std::uint64_t control_malformed = 0;
  std::uint64_t control_refused = 0;
};

// The largest control request switchd reads. The largest real one, an
// install_job of 256 workers and 256 servers, is under 32 KiB; a cap keeps a
// 100 MB "request" from being buffered and parsed on the data-path thread.
inline constexpr std::size_t kMaxControlRequestBytes = std::size_t{1} << 20;  // 1 MiB
// The largest frame the control socket takes at all: a request between the
// two caps is read and answered with an error; a larger one is dropped by
// ZeroMQ at its size prefix, before it is buffered, and cannot be answered.
inline constexpr std::size_t kMaxControlFrameBytes = std::size_t{16} << 20;  // 16 MiB

// A token anyone can guess (a default once used when a job named none).
bool IsWellKnownToken(const std::string& token);

nlohmann::json CountersToJson(const dataplane::SwitchBackend& program, const IoCounters& io);

nlohmann::json HandleControlRequest(const nlohmann::json& request,
                                    dataplane::SwitchBackend& program, const IoCounters& io);

// One request as it came off the control socket (`frames` > 1: a multi-frame
// ZeroMQ message, whose first frame is `text`) to the reply text. Never
// throws on any input; counts the request in `io`.
std::string ServeControlRequest(std::string_view text, std::size_t frames,
                                dataplane::SwitchBackend& program, IoCounters& io);

}  // namespace libra::switchd
