#include "switchd/control_handler.h"

#include <exception>
#include <string>

#include "wire/wire_format.h"

namespace libra::switchd {
namespace {

using nlohmann::json;

json Refuse(const std::string& error) { return json{{"ok", false}, {"error", error}}; }

std::string TokenOf(const json& request) {
  return request.contains("token") && request["token"].is_string()
             ? request["token"].get<std::string>()
             : std::string();
}

json FitToJson(const dataplane::FitReport& fit) {
  json arrays = json::array();
  for (const auto& a : fit.arrays) {
    arrays.push_back(
        {{"name", a.name}, {"stage", a.stage}, {"entries", a.entries}, {"bits", a.bits()}});
  }
  return json{{"fits", fit.fits},
              {"problems", fit.problems},
              {"register_bits_used", fit.register_bits_used},
              {"register_bits_budget", fit.register_bits_budget},
              {"register_share", fit.register_share()},
              {"arrays", arrays}};
}

json InstallJob(const json& request, dataplane::SwitchBackend& program) {
  if (!request.contains("job")) return Refuse("install_job needs a 'job' object");
  std::string error;
  const auto job = SwitchJobFromJson(request["job"], &error);
  if (!job) return Refuse(error);
  if (job->token.empty()) return Refuse("job field 'token' must not be empty");
  if (IsWellKnownToken(job->token)) {
    return Refuse("job token '" + job->token +
                  "' is a well-known default and authorises nothing; give the job a secret "
                  "token (--job-token) or none (its controller then chooses a random one)");
  }
  // A running job is replaced only by whoever holds its token (a reinstall
  // after a switch restart, or the same controller moving to a new job).
  // Anyone else is another job: this switch holds one job at a time.
  if (const SwitchJob* running = program.job(); running && running->token != job->token) {
    return Refuse("switchd holds one job at a time and job " + std::to_string(running->job_id) +
                  " (another token) is installed; remove it first or use another switchd");
  }
  const dataplane::InstallResult result = program.InstallJob(*job);
  if (!result.ok) {
    json reply = Refuse(result.error);
    reply["fit"] = FitToJson(result.fit);
    return reply;
  }
  return json{{"ok", true},
              {"job_id", job->job_id},
              {"wire_version", LIBRA_WIRE_VERSION},
              {"fit", FitToJson(result.fit)}};
}

json RemoveJob(const json& request, dataplane::SwitchBackend& program) {
  const SwitchJob* running = program.job();
  if (running == nullptr) return Refuse("no job is installed");
  if (!request.contains("job_id") || !request["job_id"].is_number_integer() ||
      request["job_id"].get<std::int64_t>() != std::int64_t{running->job_id}) {
    return Refuse("remove_job: 'job_id' does not name the installed job");
  }
  if (TokenOf(request) != running->token) return Refuse("remove_job: wrong token");
  program.RemoveJob();
  return json{{"ok", true}};
}

}  // namespace

bool IsWellKnownToken(const std::string& token) { return token == "libra"; }

json CountersToJson(const dataplane::SwitchBackend& program, const IoCounters& io) {
  json drops = json::object();
  json events = json::object();
  const dataplane::ProgramCounters counters = program.Counters();
  for (std::size_t i = 0; i < counters.drops.size(); ++i) {
    drops[std::string(dataplane::DropReasonName(static_cast<dataplane::DropReason>(i)))] =
        counters.drops[i];
  }
  for (std::size_t i = 0; i < counters.events.size(); ++i) {
    events[std::string(dataplane::EventName(static_cast<dataplane::Event>(i)))] =
        counters.events[i];
  }
  const SwitchJob* job = program.job();
  json backend = json::object();
  for (const auto& [name, value] : program.BackendCounters()) backend[name] = value;
  return json{{"profile", program.profile().name},
              {"backend", backend},
              {"job_id", job ? json(job->job_id) : json(nullptr)},
              {"drops", drops},
              {"drops_total", counters.TotalDrops()},
              {"events", events},
              {"io",
               {{"datagrams_received", io.datagrams_received},
                {"datagrams_sent", io.datagrams_sent},
                {"ingress_loss_injected", io.ingress_loss_injected},
                {"egress_loss_injected", io.egress_loss_injected},
                {"send_refused", io.send_refused}}},
              {"control",
               {{"requests", io.control_requests},
                {"malformed", io.control_malformed},
                {"refused", io.control_refused}}}};
}

json HandleControlRequest(const json& request, dataplane::SwitchBackend& program,
                          const IoCounters& io) {
  if (!request.is_object() || !request.contains("op") || !request["op"].is_string()) {
    return Refuse("a request is a JSON object with a string 'op'");
  }
  const std::string op = request["op"].get<std::string>();
  if (op == "install_job") return InstallJob(request, program);
  if (op == "remove_job") return RemoveJob(request, program);
  if (op == "counters") {
    json reply = CountersToJson(program, io);
    reply["ok"] = true;
    return reply;
  }
  if (op == "probe") {
    const SwitchJob* job = program.job();
    return json{{"ok", true},
                {"job_id", job ? json(job->job_id) : json(nullptr)},
                {"wire_version", LIBRA_WIRE_VERSION}};
  }
  return Refuse("unknown op '" + op + "'");
}

std::string ServeControlRequest(std::string_view text, std::size_t frames,
                                dataplane::SwitchBackend& program, IoCounters& io) {
  ++io.control_requests;
  json reply;
  bool malformed = true;
  if (frames != 1) {
    reply = Refuse("a request is one ZeroMQ frame, not " + std::to_string(frames));
  } else if (text.size() > kMaxControlRequestBytes) {
    malformed = false;  // maybe a request, but not one switchd reads
    reply = Refuse("a request of " + std::to_string(text.size()) + " bytes is larger than the " +
                   std::to_string(kMaxControlRequestBytes) + " bytes switchd reads");
  } else {
    try {
      const json request = json::parse(text);
      // The parser lets invalid UTF-8 through in strings; serialising it
      // throws, so the reply (which may quote the request) could not be sent.
      (void)request.dump();
      malformed = !request.is_object() || !request.contains("op") || !request["op"].is_string();
      reply = HandleControlRequest(request, program, io);
    } catch (const json::exception& e) {
      reply = Refuse(std::string("malformed JSON request: ") + e.what());
    } catch (const std::exception& e) {
      // Nothing a request holds should get here (bad_alloc, a bug): refuse
      // it rather than stop the switch and every job on it.
      reply = Refuse(std::string("request failed: ") + e.what());
    }
  }
  if (malformed) ++io.control_malformed;
  if (!reply.value("ok", false)) ++io.control_refused;
  // `replace` keeps dump() from throwing whatever bytes an error quotes.
  return reply.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace libra::switchd
