// A job as the controller installs it on the switch: who may talk to it, how
// big its register arrays are, and the fixed-point scale.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace libra {

// An IPv4 UDP address, host byte order.
struct UdpEndpoint {
  std::uint32_t ipv4 = 0;
  std::uint16_t port = 0;

  friend bool operator==(const UdpEndpoint&, const UdpEndpoint&) = default;
  std::uint64_t Key() const { return (std::uint64_t{ipv4} << 16) | port; }
  std::string ToString() const;
  // Parses "a.b.c.d:port"; nullopt when malformed.
  static std::optional<UdpEndpoint> Parse(std::string_view text);
};

struct SwitchJob {
  std::uint32_t job_id = 0;
  // Every control request that changes this job must carry this token.
  std::string token;
  std::vector<UdpEndpoint> workers;  // worker id = position
  std::vector<UdpEndpoint> servers;  // server id = position
  std::uint32_t cells_per_array = 0;
  int scale_bits = 16;  // F: fixed point = round(value * 2^F)
  int slots_per_packet = 32;
};

// The job's JSON carries `wire_version`, the hot-path wire version of the
// hosts that send it (LIBRA_WIRE_VERSION, wire_format.h): a switch of
// another version would drop every packet of the job as malformed, so it
// refuses the job instead, and says which versions met.
nlohmann::json ToJson(const SwitchJob& job);
// Reads a job; on a missing or malformed field, or a wire version other
// than this build's, returns nullopt and names the field in *error.
std::optional<SwitchJob> SwitchJobFromJson(const nlohmann::json& json, std::string* error);

}  // namespace libra
