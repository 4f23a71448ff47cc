// Transport over ZeroMQ: one ROUTER socket receives from everyone; one
// DEALER socket per peer sends to it. With DMLC_LOCAL=1 (all nodes on one
// machine, as in PS-lite) peers on this host are reached over a Unix-domain
// (ipc) socket instead of TCP, which skips the TCP/IP stack. Data arrays are handed to ZeroMQ
// without copying (the frame keeps the array alive until sent) and received
// frames become SArrays without copying.
//
// The receiving socket faces whatever can reach its port, so it accepts no
// frame larger than PS_MAX_MESSAGE_BYTES (default kDefaultMaxFrameBytes):
// ZeroMQ drops a larger one at its size prefix, before allocating it, and
// disconnects the sender. A frame is one array of a message (keys, values or
// lengths); a push of 10M keys with one float each is a frame of 80 MB of
// keys and one of 40 MB of values. A node refuses to send a frame over its
// own cap, which would otherwise vanish at the receiver.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <zmq.hpp>

#include "ps/internal/transport.h"

namespace ps {

// 1 GiB: 10M keys of up to 26 floats each in one push. The runtime counts a
// message's bytes in an int, so 2 GiB is a hard limit anyway.
inline constexpr int kDefaultMaxFrameBytes = 1 << 30;

class ZmqTransport : public Transport {
 public:
  explicit ZmqTransport(bool local);
  ~ZmqTransport() override;

  int Bind(const Node& node) override;
  void Connect(const Node& node) override;
  int SendMsg(const Message& msg) override;
  int RecvMsg(Message* msg) override;
  void Stop() override;

 private:
  struct Peer {
    zmq::socket_t socket;
    std::mutex mu;  // ZeroMQ sockets are not thread-safe
  };

  zmq::context_t context_;
  std::unique_ptr<zmq::socket_t> receiver_;
  std::mutex peers_mu_;
  std::unordered_map<int, std::unique_ptr<Peer>> peers_;
  bool stopped_ = false;
  bool local_;  // DMLC_LOCAL: also listen on, and prefer, an ipc endpoint
  std::string my_host_;
  int max_frame_bytes_;  // PS_MAX_MESSAGE_BYTES
  std::string secret_;   // PS_JOB_SECRET: empty, no CURVE (zmq_curve.h)
};

}  // namespace ps
