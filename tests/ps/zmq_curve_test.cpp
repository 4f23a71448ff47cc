// CURVE on a job's ZeroMQ connections (src/ps/zmq_curve.h): a peer with the
// job's secret gets its messages through; one without it, or with another
// secret, fails the handshake (a monitor event says so) and none of its
// messages ever reaches the node.
#include "ps/zmq_curve.h"

#include <gtest/gtest.h>

#include <string>
#include <zmq.hpp>

namespace ps {
namespace {

TEST(ZmqCurve, KeysFollowTheSecretAndTheSide) {
  const CurveKeys server = DeriveCurveKeys("job secret", true);
  EXPECT_EQ(server.public_key, DeriveCurveKeys("job secret", true).public_key);
  EXPECT_NE(server.public_key, DeriveCurveKeys("job secret", false).public_key);
  EXPECT_NE(server.public_key, DeriveCurveKeys("job secret!", true).public_key);
  EXPECT_NE(server.public_key, server.secret_key);
  EXPECT_THROW(DeriveCurveKeys("", true), std::invalid_argument);
}

// A node's listening socket with the job's secret, and a monitor of its
// failed handshakes.
class CurveNode {
 public:
  explicit CurveNode(zmq::context_t& context) : router_(context, zmq::socket_type::router) {
    router_.set(zmq::sockopt::rcvtimeo, 10000);  // a safety net only: a test waits on events
    UseCurveAsServer(router_, "the job's secret");
    router_.bind("tcp://127.0.0.1:*");
    endpoint_ = router_.get(zmq::sockopt::last_endpoint);
    ZMQ_ASSERT(zmq_socket_monitor(router_.handle(), "inproc://curve-monitor",
                                  ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                                      ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                                      ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) == 0);
    monitor_ = zmq::socket_t(context, zmq::socket_type::pair);
    monitor_.set(zmq::sockopt::rcvtimeo, 10000);
    monitor_.connect("inproc://curve-monitor");
  }

  // The monitor is stopped before its sockets close: libzmq's I/O thread
  // blocks on a monitor queue nobody reads, and the context would never end.
  ~CurveNode() { zmq_socket_monitor(router_.handle(), nullptr, 0); }

  const std::string& endpoint() const { return endpoint_; }

  // The next message's body, or "" if none came within the safety net.
  std::string Receive() {
    zmq::message_t identity, body;
    if (!router_.recv(identity) || !router_.recv(body)) return "";
    return body.to_string();
  }

  // Waits for a failed handshake; false if none within the safety net.
  bool HandshakeFailed() {
    zmq::message_t event, address;
    return monitor_.recv(event).has_value() && monitor_.recv(address).has_value();
  }

 private:
  zmq::socket_t router_;
  zmq::socket_t monitor_;
  std::string endpoint_;
};

zmq::socket_t Peer(zmq::context_t& context, const std::string& endpoint, const char* secret) {
  zmq::socket_t dealer(context, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  if (secret != nullptr) UseCurveAsClient(dealer, secret);
  dealer.connect(endpoint);
  return dealer;
}

TEST(ZmqCurve, APeerWithTheSecretGetsThrough) {
  zmq::context_t context;
  CurveNode node(context);
  zmq::socket_t member = Peer(context, node.endpoint(), "the job's secret");
  member.send(zmq::str_buffer("push"));
  EXPECT_EQ(node.Receive(), "push");
}

TEST(ZmqCurve, APeerWithoutTheSecretNeverDeliversAMessage) {
  for (const char* secret : {static_cast<const char*>(nullptr), "another job's secret"}) {
    zmq::context_t context;
    CurveNode node(context);
    {
      // Closed once refused: it would retry every 100 ms, each retry another
      // monitor event, until the monitor's queue filled.
      zmq::socket_t intruder = Peer(context, node.endpoint(), secret);
      intruder.send(zmq::str_buffer("forged push"));
      ASSERT_TRUE(node.HandshakeFailed()) << (secret ? secret : "no CURVE");
    }
    // A member's message after the failed handshake is the first to arrive.
    zmq::socket_t member = Peer(context, node.endpoint(), "the job's secret");
    member.send(zmq::str_buffer("push"));
    EXPECT_EQ(node.Receive(), "push") << (secret ? secret : "no CURVE");
  }
}

}  // namespace
}  // namespace ps
