// Fuzzes switchd's control protocol: each line of the input is one request
// as it arrives on the control port, answered by ServeControlRequest (what
// SwitchDaemon calls with the bytes of a one-frame message) against one
// program, so that a sequence can install, replace and remove jobs. Invariants:
//   - ServeControlRequest never throws, whatever bytes it is given, and its
//     reply text parses to an object with a boolean "ok" and an "error"
//     string when false; every request is counted, and counted refused
//     exactly when the reply says so;
//   - the program changes only on an "ok" install or remove: after an ok
//     install_job the installed job is the requested one (and survives a
//     JSON round trip); after an ok remove_job nothing is installed; a
//     refused request leaves the installed job as it was.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>
#include <string_view>

#include "switchd/control_handler.h"

namespace {

using nlohmann::json;
using namespace libra;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz_control_handler: invariant broken: %s\n", what);
    std::abort();
  }
}

std::optional<json> InstalledJob(const dataplane::Program& program) {
  if (program.job() == nullptr) return std::nullopt;
  return ToJson(*program.job());
}

void HandleOne(std::string_view text, dataplane::Program& program, switchd::IoCounters& io) {
  const std::optional<json> before = InstalledJob(program);
  const switchd::IoCounters counted = io;
  std::string reply_text;
  try {
    reply_text = switchd::ServeControlRequest(text, 1, program, io);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_control_handler: request threw: %s\n", e.what());
    std::abort();
  }
  json reply;
  try {
    reply = json::parse(reply_text);
  } catch (const json::exception&) {
    Check(false, "the reply is JSON");
  }
  Check(reply.is_object() && reply.contains("ok") && reply["ok"].is_boolean(), "reply has ok");
  const bool ok = reply["ok"].get<bool>();
  Check(io.control_requests == counted.control_requests + 1, "the request is counted");
  Check(io.control_refused == counted.control_refused + (ok ? 0 : 1), "a refusal is counted");
  const std::optional<json> after = InstalledJob(program);
  if (!ok) {
    Check(reply.contains("error") && reply["error"].is_string(), "refusal has an error");
    Check(before == after, "a refused request changed the program");
    return;
  }
  const json request = json::parse(text);  // an ok reply: it parsed
  const std::string op = request["op"].get<std::string>();
  if (op == "install_job") {
    std::string error;
    const std::optional<SwitchJob> wanted = SwitchJobFromJson(request["job"], &error);
    Check(wanted.has_value() && after.has_value(), "installed");
    Check(*after == ToJson(*wanted), "the installed job is the requested one");
    const std::optional<SwitchJob> again = SwitchJobFromJson(*after, &error);
    Check(again.has_value() && ToJson(*again) == *after, "job JSON round trip");
    Check(reply["job_id"] == json(wanted->job_id), "reply names the job");
  } else if (op == "remove_job") {
    Check(before.has_value() && !after.has_value(), "removed");
  } else {
    Check(before == after, "a read-only request changed the program");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  dataplane::Program program;
  switchd::IoCounters io;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::size_t at = 0;
  while (at <= input.size()) {
    std::size_t end = input.find('\n', at);
    if (end == std::string_view::npos) end = input.size();
    HandleOne(input.substr(at, end - at), program, io);
    at = end + 1;
  }
  return 0;
}
