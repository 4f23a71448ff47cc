#include "ps/network_utils.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>

#include <cstring>

namespace ps {

namespace {
std::string ToString(const sockaddr_in* addr) {
  char buf[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, &addr->sin_addr, buf, sizeof(buf));
  return buf;
}

// Calls `pick(interface)` on each IPv4 interface until it returns a non-empty string.
template <typename Pick>
std::string FindAddress(Pick pick) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return "";
  std::string found;
  for (ifaddrs* ifa = list; ifa != nullptr && found.empty(); ifa = ifa->ifa_next) {
    if (ifa->ifa_addr == nullptr || ifa->ifa_addr->sa_family != AF_INET) continue;
    found = pick(ifa);
  }
  freeifaddrs(list);
  return found;
}
}  // namespace

std::string InterfaceAddress(const std::string& name) {
  return FindAddress([&](ifaddrs* ifa) -> std::string {
    if (name != ifa->ifa_name) return "";
    return ToString(reinterpret_cast<sockaddr_in*>(ifa->ifa_addr));
  });
}

std::string FirstExternalAddress() {
  return FindAddress([](ifaddrs* ifa) -> std::string {
    if (ifa->ifa_flags & IFF_LOOPBACK) return "";
    return ToString(reinterpret_cast<sockaddr_in*>(ifa->ifa_addr));
  });
}

std::string ResolveHost(const std::string& host) {
  in_addr parsed;
  if (inet_pton(AF_INET, host.c_str(), &parsed) == 1) return host;
  addrinfo hints;
  std::memset(&hints, 0, sizeof(hints));
  hints.ai_family = AF_INET;
  addrinfo* result = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &result) != 0 || result == nullptr) return "";
  std::string address = ToString(reinterpret_cast<sockaddr_in*>(result->ai_addr));
  freeaddrinfo(result);
  return address;
}

bool IsLoopbackAddress(const std::string& address) { return address.rfind("127.", 0) == 0; }

}  // namespace ps
