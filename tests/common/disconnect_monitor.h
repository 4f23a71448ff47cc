// Watches a ZeroMQ socket for the peer closing its connection: how a test
// sees that a receiver dropped a message over its size cap (ZMQ_MAXMSGSIZE),
// which it does by disconnecting the sender without a reply.
#pragma once

#include <string>
#include <zmq.hpp>

namespace libra::test_support {

class DisconnectMonitor {
 public:
  // Call before `socket` connects; `name` is unique within `context`.
  DisconnectMonitor(zmq::context_t& context, zmq::socket_t& socket, const std::string& name)
      : watched_(socket.handle()), events_(context, zmq::socket_type::pair) {
    const std::string endpoint = "inproc://" + name;
    zmq_socket_monitor(watched_, endpoint.c_str(), ZMQ_EVENT_DISCONNECTED);
    events_.set(zmq::sockopt::rcvtimeo, 10000);  // a bound for a failing test, not a wait
    events_.connect(endpoint);
  }

  // Stops the monitor before the sockets close: a monitor left running while
  // its events go unread can keep the context from terminating (a socket
  // that reconnects queues an event each time). Declare it after `socket`.
  ~DisconnectMonitor() { zmq_socket_monitor(watched_, nullptr, 0); }
  DisconnectMonitor(const DisconnectMonitor&) = delete;
  DisconnectMonitor& operator=(const DisconnectMonitor&) = delete;

  // True once the connection was closed by the peer (false after 10 s).
  bool Disconnected() {
    zmq::message_t event;
    return events_.recv(event).has_value();
  }

 private:
  void* watched_;
  zmq::socket_t events_;
};

}  // namespace libra::test_support
