// The byte-moving layer under the Van. ZeroMQ is the implementation today
// (src/ps/zmq_transport.h); a UDP or RDMA transport implements the same five
// calls. A transport moves whole Messages and must not copy data arrays when
// the underlying library allows it.
#pragma once

#include <memory>
#include <string>

#include "ps/internal/message.h"

namespace ps {

class Transport {
 public:
  virtual ~Transport() = default;

  // Starts listening on node.hostname. node.port == Node::kEmpty picks a free
  // port. Returns the port bound; throws ps::Error on failure.
  virtual int Bind(const Node& node) = 0;

  // Opens a channel to `node`; later messages whose recver is node.id go there.
  virtual void Connect(const Node& node) = 0;

  // Sends to msg.meta.recver (connected before). Returns the bytes sent, or
  // -1 when the transport is stopped.
  virtual int SendMsg(const Message& msg) = 0;

  // Blocks until a message arrives. Returns the bytes received, or -1 once
  // Stop() was called. A message that cannot be decoded returns 0 (dropped).
  virtual int RecvMsg(Message* msg) = 0;

  // Unblocks RecvMsg and releases resources; queued messages are flushed for
  // a short while first.
  virtual void Stop() = 0;
};

// The transport chosen by DMLC_PS_VAN_TYPE (only "zmq" today). `local`
// (DMLC_LOCAL=1) says all nodes run on this machine.
std::unique_ptr<Transport> CreateTransport(const std::string& type, bool local);

}  // namespace ps
