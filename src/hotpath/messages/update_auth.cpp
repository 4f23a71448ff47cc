#include "hotpath/messages/update_auth.h"

#include <sodium.h>

#include <cstring>
#include <optional>
#include <stdexcept>

#include "wire/wire.h"

namespace libra::hotpath {
namespace {

static_assert(wire::kUpdateTagBytes == crypto_shorthash_siphashx24_BYTES);
static_assert(crypto_shorthash_siphashx24_KEYBYTES == 16);
static_assert(UpdateKey::kBytes >= crypto_generichash_KEYBYTES_MIN &&
              UpdateKey::kBytes <= crypto_generichash_KEYBYTES_MAX);

// libsodium picks its implementations once, before any other call; safe to
// call from several threads, and again.
void InitSodium() {
  static const bool ready = sodium_init() >= 0;
  if (!ready) throw std::runtime_error("libsodium could not be initialised");
}

// The MAC's own key, derived from the job's key once per thread and key: a
// derivation is a BLAKE2b, which costs as much as four MACs.
const std::array<std::uint8_t, 16>& MacKeyOf(const UpdateKey& key) {
  thread_local std::optional<UpdateKey> derived_from;
  thread_local std::array<std::uint8_t, 16> mac_key;
  if (!derived_from || !(*derived_from == key)) {
    mac_key = DeriveFromKey(key, "libra update mac");
    derived_from = key;
  }
  return mac_key;
}

// The MAC of the bytes before the tag, the header taken as the server sent
// it the first time: type UPDATE, no RETRANSMISSION flag.
std::array<std::uint8_t, wire::kUpdateTagBytes> MacOf(const UpdateKey& key,
                                                      std::span<const std::uint8_t> message) {
  InitSodium();
  const std::size_t tag_at = wire::UpdateTagAt(message.size());
  std::array<std::uint8_t, wire::kMaxMessageBytes> signed_bytes;  // callers checked the size
  std::memcpy(signed_bytes.data(), message.data(), tag_at);
  wire::SetType(signed_bytes.data(), wire::MessageType::kUpdate);
  const std::uint16_t flags = wire::LoadBig16(signed_bytes.data() + wire::kFlagsAt);
  wire::SetFlags(signed_bytes.data(), flags & ~wire::kFlagRetransmission);

  std::array<std::uint8_t, wire::kUpdateTagBytes> mac;
  crypto_shorthash_siphashx24(mac.data(), signed_bytes.data(), tag_at, MacKeyOf(key).data());
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
  if (message.size() > wire::kMaxMessageBytes) {
    throw std::invalid_argument("sign update: the message is longer than the format allows");
  }
  const auto mac = MacOf(key, message);
  std::memcpy(message.data() + wire::UpdateTagAt(message.size()), mac.data(), mac.size());
}

bool VerifyUpdate(const UpdateKey& key, std::span<const std::uint8_t> message) {
  if (message.size() < wire::kHeaderBytes + wire::kUpdateTagBytes ||
      message.size() > wire::kMaxMessageBytes) {
    return false;
  }
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
