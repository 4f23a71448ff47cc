// The end-to-end authentication of the values a server publishes.
//
// The switch replicates a server's UPDATE to every worker as REPLICA and
// cannot tell a forged one (the real server's source address spoofed) from
// the real one. So the hosts check it: each UPDATE ends with a tag
// (wire.h: kUpdateTagBytes at UpdateTagAt), a MAC under a secret key the
// controller draws per job and hands to the servers and the workers with the
// INSTALL; the switch never has it. The MAC is SipHash-2-4 with its 16-byte
// output (libsodium's crypto_shorthash_siphashx24), a keyed function made for
// short messages, under a 16-byte key of its own derived from the job's key
// (DeriveFromKey). Keyed BLAKE2b, the MAC before, cost four times as much
// (0.94 against 0.24 us for a 532-byte packet), once per UPDATE signed and
// once per REPLICA at every worker. It covers every byte before the tag,
// which holds the job id, the server, the epoch, the packet's number, the
// LAST flag and the values: a packet of another job, server, epoch or
// place in the stream, or with one value changed, does not verify. Two
// things are left out on purpose: the type byte, read as UPDATE (the switch
// rewrites it to REPLICA), and the RETRANSMISSION flag (a server sets it in
// place on a resend). A replay of a real packet as it was is a duplicate the
// replica ignores (it holds that epoch's values already); moved to another
// epoch or seq it no longer verifies.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace libra::hotpath {

// A job's key. All zero until the controller draws one; a server and a
// worker built without one (tests) both use that and agree.
struct UpdateKey {
  static constexpr std::size_t kBytes = 32;
  std::array<std::uint8_t, kBytes> bytes{};
  bool operator==(const UpdateKey&) const = default;
};

// kBytes from the operating system's random source (randombytes_buf).
UpdateKey NewUpdateKey();

// Writes the tag of an encoded UPDATE or REPLICA (`message`, its whole
// length, at least kHeaderBytes + kUpdateTagBytes and at most
// kMaxMessageBytes: what wire::EncodeUpdate wrote; std::invalid_argument
// otherwise). Sign after the last change to the header (the LAST flag).
void SignUpdate(const UpdateKey& key, std::span<std::uint8_t> message);

// Whether the tag of `message` (an UPDATE or REPLICA that wire::Decode
// accepted) is the MAC of the rest under `key`; compared in constant time.
bool VerifyUpdate(const UpdateKey& key, std::span<const std::uint8_t> message);

// 16 bytes for another use of the job's key, named by `label` (keyed BLAKE2b
// of the label): a key of its own per use, so that no output of one use
// tells anything of another.
std::array<std::uint8_t, 16> DeriveFromKey(const UpdateKey& key, std::string_view label);

}  // namespace libra::hotpath
