// The controller's side of libra-switchd's control port: install and remove
// a job, read counters, probe. Requests time out instead of hanging; a
// refused request throws SwitchControlError with the switch's reason.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "wire/switch_job.h"

namespace libra::hotpath {

class SwitchControlError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class SwitchControlClient {
 public:
  // `endpoint`: "a.b.c.d:port" or "tcp://a.b.c.d:port".
  explicit SwitchControlClient(const std::string& endpoint,
                               std::chrono::milliseconds timeout = std::chrono::seconds(2));
  ~SwitchControlClient();
  SwitchControlClient(const SwitchControlClient&) = delete;
  SwitchControlClient& operator=(const SwitchControlClient&) = delete;

  // Returns the switch's fit report ("register_bits_used", "register_share", ...);
  // throws SwitchControlError when the switch refuses the job, or answers
  // from another hot-path wire version (LIBRA_WIRE_VERSION) or none.
  nlohmann::json InstallJob(const SwitchJob& job);
  void RemoveJob(std::uint32_t job_id, const std::string& token);
  nlohmann::json Counters();
  // True when the switch answered within the timeout.
  bool Probe();

  // Sends any request and returns the reply; throws SwitchControlError on
  // timeout or on a reply with "ok": false.
  nlohmann::json Request(const nlohmann::json& request);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace libra::hotpath
