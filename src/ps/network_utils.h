// Finding this node's address from DMLC_NODE_HOST, DMLC_INTERFACE or the
// scheduler's address.
#pragma once

#include <string>

namespace ps {

// The IPv4 address of network interface `name`, or "" if it has none.
std::string InterfaceAddress(const std::string& name);
// The first IPv4 address of a non-loopback interface, or "" if none.
std::string FirstExternalAddress();
// `host` as a dotted IPv4 address (resolving a name), or "" if unknown.
std::string ResolveHost(const std::string& host);
bool IsLoopbackAddress(const std::string& address);

}  // namespace ps
