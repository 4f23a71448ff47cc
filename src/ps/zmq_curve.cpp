#include "ps/zmq_curve.h"

#include <sodium.h>

#include <stdexcept>

namespace ps {

CurveKeys DeriveCurveKeys(const std::string& secret, bool server) {
  if (secret.empty()) throw std::invalid_argument("PS_JOB_SECRET is empty");
  if (sodium_init() < 0) throw std::runtime_error("libsodium cannot start");
  // A seed per side: the keyed hash of the side's name under the secret
  // (BLAKE2b keys are at most 64 bytes, so the secret is hashed first).
  unsigned char key[crypto_generichash_KEYBYTES];
  crypto_generichash(key, sizeof key, reinterpret_cast<const unsigned char*>(secret.data()),
                     secret.size(), nullptr, 0);
  const std::string side = server ? "libra job: listening side" : "libra job: connecting side";
  unsigned char seed[crypto_box_SEEDBYTES];
  crypto_generichash(seed, sizeof seed, reinterpret_cast<const unsigned char*>(side.data()),
                     side.size(), key, sizeof key);
  CurveKeys keys;
  crypto_box_seed_keypair(keys.public_key.data(), keys.secret_key.data(), seed);
  sodium_memzero(key, sizeof key);
  sodium_memzero(seed, sizeof seed);
  return keys;
}

void UseCurveAsServer(zmq::socket_t& socket, const std::string& secret) {
  const CurveKeys server = DeriveCurveKeys(secret, true);
  socket.set(zmq::sockopt::curve_server, 1);
  socket.set(zmq::sockopt::curve_secretkey, zmq::const_buffer(server.secret_key.data(), 32));
}

void UseCurveAsClient(zmq::socket_t& socket, const std::string& secret) {
  const CurveKeys server = DeriveCurveKeys(secret, true);
  const CurveKeys client = DeriveCurveKeys(secret, false);
  socket.set(zmq::sockopt::curve_serverkey, zmq::const_buffer(server.public_key.data(), 32));
  socket.set(zmq::sockopt::curve_publickey, zmq::const_buffer(client.public_key.data(), 32));
  socket.set(zmq::sockopt::curve_secretkey, zmq::const_buffer(client.secret_key.data(), 32));
}

}  // namespace ps
