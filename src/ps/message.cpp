#include "ps/internal/message.h"

namespace ps {

const char* RoleName(Node::Role role) {
  switch (role) {
    case Node::SERVER:
      return "server";
    case Node::WORKER:
      return "worker";
    case Node::SCHEDULER:
      return "scheduler";
  }
  return "unknown";
}

std::string Node::ShortDebugString() const {
  std::ostringstream os;
  os << RoleName(role);
  if (id != kEmpty) os << " (id " << id << ")";
  os << " at " << hostname << ":" << port;
  return os.str();
}

std::string Message::DebugString() const {
  std::ostringstream os;
  os << "{" << meta.sender << " -> " << meta.recver;
  if (!meta.control.empty()) {
    static const char* kNames[] = {"EMPTY",     "TERMINATE", "ADD_NODE", "BARRIER",
                                   "HEARTBEAT", "EXIT",      "ABORT"};
    os << " control " << kNames[meta.control.cmd];
    if (meta.control.cmd == Control::BARRIER) os << " group " << meta.control.barrier_group;
    for (const Node& n : meta.control.node) os << " [" << n.ShortDebugString() << "]";
  } else {
    os << " app " << meta.app_id << " customer " << meta.customer_id << " ts " << meta.timestamp
       << (meta.request ? " request" : " response") << (meta.push ? " push" : "")
       << (meta.pull ? " pull" : "") << " head " << meta.head;
    for (const auto& d : data) os << " data:" << d.size() << "B";
  }
  if (!meta.body.empty()) os << " body '" << meta.body << "'";
  os << "}";
  return os.str();
}

}  // namespace ps
