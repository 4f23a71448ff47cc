#include "wire/switch_job.h"

#include <charconv>
#include <limits>

#include "wire/wire_format.h"

namespace libra {
namespace {

template <typename Int>
bool ParseInt(std::string_view text, Int max, Int* out) {
  Int value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value > max) return false;
  *out = value;
  return true;
}

std::optional<std::vector<UdpEndpoint>> EndpointsFromJson(const nlohmann::json& json,
                                                          const char* field, std::string* error) {
  if (!json.contains(field) || !json[field].is_array()) {
    *error = std::string("job field '") + field + "' must be an array of \"a.b.c.d:port\"";
    return std::nullopt;
  }
  std::vector<UdpEndpoint> endpoints;
  for (const auto& item : json[field]) {
    auto endpoint = item.is_string() ? UdpEndpoint::Parse(item.get<std::string>()) : std::nullopt;
    if (!endpoint) {
      *error = std::string("job field '") + field + "': bad address " + item.dump();
      return std::nullopt;
    }
    endpoints.push_back(*endpoint);
  }
  return endpoints;
}

template <typename Int>
bool IntField(const nlohmann::json& json, const char* field, Int* out, std::string* error) {
  if (!json.contains(field) || !json[field].is_number_integer()) {
    *error = std::string("job field '") + field + "' must be an integer";
    return false;
  }
  const auto value = json[field].get<std::int64_t>();
  if (value < 0 || value > static_cast<std::int64_t>(std::numeric_limits<Int>::max())) {
    *error = std::string("job field '") + field + "' out of range";
    return false;
  }
  *out = static_cast<Int>(value);
  return true;
}

}  // namespace

std::string UdpEndpoint::ToString() const {
  return std::to_string(ipv4 >> 24) + "." + std::to_string((ipv4 >> 16) & 0xff) + "." +
         std::to_string((ipv4 >> 8) & 0xff) + "." + std::to_string(ipv4 & 0xff) + ":" +
         std::to_string(port);
}

std::optional<UdpEndpoint> UdpEndpoint::Parse(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  UdpEndpoint endpoint;
  if (!ParseInt<std::uint16_t>(text.substr(colon + 1), 65535, &endpoint.port)) return std::nullopt;
  std::string_view host = text.substr(0, colon);
  for (int octet = 0; octet < 4; ++octet) {
    const auto dot = host.find('.');
    if ((octet < 3) == (dot == std::string_view::npos)) return std::nullopt;
    std::uint32_t byte = 0;
    if (!ParseInt<std::uint32_t>(host.substr(0, dot), 255, &byte)) return std::nullopt;
    endpoint.ipv4 = (endpoint.ipv4 << 8) | byte;
    host = octet < 3 ? host.substr(dot + 1) : std::string_view();
  }
  return endpoint;
}

nlohmann::json ToJson(const SwitchJob& job) {
  nlohmann::json json;
  json["job_id"] = job.job_id;
  json["token"] = job.token;
  json["workers"] = nlohmann::json::array();
  for (const auto& w : job.workers) json["workers"].push_back(w.ToString());
  json["servers"] = nlohmann::json::array();
  for (const auto& s : job.servers) json["servers"].push_back(s.ToString());
  json["cells_per_array"] = job.cells_per_array;
  json["scale_bits"] = job.scale_bits;
  json["slots_per_packet"] = job.slots_per_packet;
  json["wire_version"] = LIBRA_WIRE_VERSION;
  return json;
}

std::optional<SwitchJob> SwitchJobFromJson(const nlohmann::json& json, std::string* error) {
  if (!json.is_object()) {
    *error = "job must be a JSON object";
    return std::nullopt;
  }
  SwitchJob job;
  if (!IntField(json, "job_id", &job.job_id, error)) return std::nullopt;
  if (!json.contains("token") || !json["token"].is_string()) {
    *error = "job field 'token' must be a string";
    return std::nullopt;
  }
  job.token = json["token"].get<std::string>();
  auto workers = EndpointsFromJson(json, "workers", error);
  if (!workers) return std::nullopt;
  job.workers = std::move(*workers);
  auto servers = EndpointsFromJson(json, "servers", error);
  if (!servers) return std::nullopt;
  job.servers = std::move(*servers);
  if (!IntField(json, "cells_per_array", &job.cells_per_array, error)) return std::nullopt;
  if (!IntField(json, "scale_bits", &job.scale_bits, error)) return std::nullopt;
  if (!IntField(json, "slots_per_packet", &job.slots_per_packet, error)) return std::nullopt;
  int wire_version = 0;
  if (!IntField(json, "wire_version", &wire_version, error)) return std::nullopt;
  if (wire_version != LIBRA_WIRE_VERSION) {
    *error = "job field 'wire_version': the job's hosts speak hot-path wire version " +
             std::to_string(wire_version) + ", this switch version " +
             std::to_string(LIBRA_WIRE_VERSION) +
             "; run the switch and the job from the same release";
    return std::nullopt;
  }
  return job;
}

}  // namespace libra
