#include "hotpath/controller/switch_control_client.h"

#include <optional>
#include <zmq.hpp>

#include "wire/wire_format.h"

namespace libra::hotpath {

struct SwitchControlClient::Impl {
  Impl(std::string endpoint, std::chrono::milliseconds timeout)
      : endpoint(std::move(endpoint)), timeout(timeout) {}

  // A REQ socket that timed out cannot send again; start a fresh one.
  void Connect() {
    socket.emplace(context, zmq::socket_type::req);
    socket->set(zmq::sockopt::linger, 0);
    socket->set(zmq::sockopt::rcvtimeo, static_cast<int>(timeout.count()));
    socket->set(zmq::sockopt::sndtimeo, static_cast<int>(timeout.count()));
    socket->connect(endpoint);
  }

  std::optional<std::string> RoundTrip(const std::string& request) {
    if (!socket) Connect();
    zmq::message_t reply;
    if (!socket->send(zmq::buffer(request), zmq::send_flags::none) ||
        !socket->recv(reply, zmq::recv_flags::none)) {
      socket.reset();
      return std::nullopt;
    }
    return reply.to_string();
  }

  zmq::context_t context{1};
  std::optional<zmq::socket_t> socket;
  std::string endpoint;
  std::chrono::milliseconds timeout;
};

SwitchControlClient::SwitchControlClient(const std::string& endpoint,
                                         std::chrono::milliseconds timeout)
    : impl_(std::make_unique<Impl>(endpoint.starts_with("tcp://") ? endpoint : "tcp://" + endpoint,
                                   timeout)) {}

SwitchControlClient::~SwitchControlClient() = default;

nlohmann::json SwitchControlClient::Request(const nlohmann::json& request) {
  const auto text = impl_->RoundTrip(request.dump());
  if (!text) {
    throw SwitchControlError("switch control " + impl_->endpoint + ": no reply within " +
                             std::to_string(impl_->timeout.count()) + " ms");
  }
  nlohmann::json reply = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!reply.is_object()) throw SwitchControlError("switch control: malformed reply");
  if (!reply.value("ok", false)) {
    throw SwitchControlError("switch refused " + request.value("op", std::string("request")) +
                             ": " + reply.value("error", std::string("no reason given")));
  }
  return reply;
}

nlohmann::json SwitchControlClient::InstallJob(const SwitchJob& job) {
  nlohmann::json reply = Request({{"op", "install_job"}, {"job", ToJson(job)}});
  // A switch of this wire version refuses a job of another; one that names
  // no version is older than the check, and took the job without reading
  // its version: it would drop every packet of it.
  const nlohmann::json version = reply.value("wire_version", nlohmann::json());
  if (!version.is_number_integer() || version.get<std::int64_t>() != LIBRA_WIRE_VERSION) {
    throw SwitchControlError(
        "switch at " + impl_->endpoint + " speaks hot-path wire version " +
        (version.is_number_integer() ? version.dump() : std::string("4 or older")) +
        ", this job version " + std::to_string(LIBRA_WIRE_VERSION) +
        "; run the switch and the job from the same release");
  }
  return reply["fit"];
}

void SwitchControlClient::RemoveJob(std::uint32_t job_id, const std::string& token) {
  Request({{"op", "remove_job"}, {"job_id", job_id}, {"token", token}});
}

nlohmann::json SwitchControlClient::Counters() { return Request({{"op", "counters"}}); }

bool SwitchControlClient::Probe() {
  try {
    Request({{"op", "probe"}});
    return true;
  } catch (const SwitchControlError&) {
    return false;
  }
}

}  // namespace libra::hotpath
