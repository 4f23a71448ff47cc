// ZeroMQ's CURVE security for a job's connections, keyed by a secret every
// node of the job shares (PS_JOB_SECRET).
//
// Without it any process that reaches a node's port can send it messages
// (a push that changes the model, a request that stops the job), and the
// job's traffic, the hot path's UPDATE key among it, crosses in clear. With
// it every connection is encrypted and authenticated: a node's listening
// socket is a CURVE server whose key pair is derived from the secret, and
// a connection completes its handshake only when it knows the server's
// public key, which is derived from the secret too and never sent. A peer
// without the secret fails the handshake and never delivers a message.
//
// Every node derives the same two key pairs (the listening side's and the
// connecting side's): the secret is the job's membership, not a node's.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <zmq.hpp>

namespace ps {

// A CURVE key pair (Curve25519, as libsodium's crypto_box makes them).
struct CurveKeys {
  std::array<std::uint8_t, 32> public_key{};
  std::array<std::uint8_t, 32> secret_key{};
};

// The listening side's keys (`server`) or the connecting side's of a job
// whose secret is `secret` (any non-empty string). Deterministic.
CurveKeys DeriveCurveKeys(const std::string& secret, bool server);

// Makes `socket` (before its bind) a CURVE server of the job.
void UseCurveAsServer(zmq::socket_t& socket, const std::string& secret);

// Makes `socket` (before its connect) a CURVE client of the job's servers.
void UseCurveAsClient(zmq::socket_t& socket, const std::string& secret);

}  // namespace ps
