#include "hotpath/messages/update_auth.h"

#include <sodium.h>

#include <cstring>
#include <stdexcept>

#include "wire/wire.h"

namespace libra::hotpath {
namespace {

static_assert(wire::kUpdateTagBytes >= crypto_generichash_BYTES_MIN &&
              wire::kUpdateTagBytes <= crypto_generichash_BYTES_MAX);
static_assert(UpdateKey::kBytes >= crypto_generichash_KEYBYTES_MIN &&
              UpdateKey::kBytes <= crypto_generichash_KEYBYTES_MAX);

// libsodium picks its implementations once, before any other call; safe to
// call from several threads, and again.
void InitSodium() {
  static const bool ready = sodium_init() >= 0;
  if (!ready) throw std::runtime_error("libsodium could not be initialised");
}

// The MAC of the bytes before the tag, the header taken as the server sent
// it the first time: type UPDATE, no RETRANSMISSION flag.
std::array<std::uint8_t, wire::kUpdateTagBytes> MacOf(const UpdateKey& key,
                                                      std::span<const std::uint8_t> message) {
  InitSodium();
  std::array<std::uint8_t, wire::kHeaderBytes> header;
  std::memcpy(header.data(), message.data(), header.size());
  wire::SetType(header.data(), wire::MessageType::kUpdate);
  const std::uint16_t flags = wire::LoadBig16(header.data() + wire::kFlagsAt);
  wire::SetFlags(header.data(), flags & ~wire::kFlagRetransmission);

  crypto_generichash_state state;
  crypto_generichash_init(&state, key.bytes.data(), key.bytes.size(), wire::kUpdateTagBytes);
  crypto_generichash_update(&state, header.data(), header.size());
  const std::size_t tag_at = wire::UpdateTagAt(message.size());
  crypto_generichash_update(&state, message.data() + wire::kHeaderBytes,
                            tag_at - wire::kHeaderBytes);
  std::array<std::uint8_t, wire::kUpdateTagBytes> mac;
  crypto_generichash_final(&state, mac.data(), mac.size());
  return mac;
}

}  // namespace

UpdateKey NewUpdateKey() {
  InitSodium();
  UpdateKey key;
  randombytes_buf(key.bytes.data(), key.bytes.size());
  return key;
}

void SignUpdate(const UpdateKey& key, std::span<std::uint8_t> message) {
  if (message.size() < wire::kHeaderBytes + wire::kUpdateTagBytes) {
    throw std::invalid_argument("sign update: the message has no room for its tag");
  }
  const auto mac = MacOf(key, message);
  std::memcpy(message.data() + wire::UpdateTagAt(message.size()), mac.data(), mac.size());
}

bool VerifyUpdate(const UpdateKey& key, std::span<const std::uint8_t> message) {
  if (message.size() < wire::kHeaderBytes + wire::kUpdateTagBytes) return false;
  const auto mac = MacOf(key, message);
  return sodium_memcmp(mac.data(), message.data() + wire::UpdateTagAt(message.size()),
                       mac.size()) == 0;
}

std::array<std::uint8_t, 16> DeriveFromKey(const UpdateKey& key, std::string_view label) {
  InitSodium();
  std::array<std::uint8_t, 16> out;
  crypto_generichash(out.data(), out.size(), reinterpret_cast<const unsigned char*>(label.data()),
                     label.size(), key.bytes.data(), key.bytes.size());
  return out;
}

}  // namespace libra::hotpath
