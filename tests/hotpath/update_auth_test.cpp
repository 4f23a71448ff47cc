// The MAC of UPDATE/REPLICA (update_auth.h): what it covers, what it leaves
// out on purpose (the type byte the switch rewrites, the RETRANSMISSION flag
// a resend sets), and that no one without the job's key can make one.
#include "hotpath/messages/update_auth.h"

#include <gtest/gtest.h>
#include <sodium.h>

#include <algorithm>
#include <array>
#include <vector>

#include "wire/wire.h"

namespace libra::hotpath {
namespace {

// A signed UPDATE of three values in two rows, epoch 3, seq 2, LAST.
std::vector<std::uint8_t> SignedUpdate(const UpdateKey& key, std::uint32_t epoch = 3) {
  const wire::CellValue cells[] = {{0, 7, 0x3f800000}, {2, 7, 0x40000000}, {1, 9, 0x40400000}};
  wire::Header header;
  header.type = wire::MessageType::kUpdate;
  header.flags = wire::kFlagLast;
  header.job_id = 11;
  header.node_id = 1;
  header.epoch = epoch;
  header.seq = 2;
  std::vector<std::uint8_t> bytes(wire::UpdateSize(cells));
  EXPECT_EQ(wire::EncodeUpdate(header, cells, bytes), bytes.size());
  SignUpdate(key, bytes);
  return bytes;
}

TEST(UpdateAuth, ASignedUpdateVerifiesAsTheSwitchReplicatesItAndAsResent) {
  const UpdateKey key = NewUpdateKey();
  std::vector<std::uint8_t> bytes = SignedUpdate(key);
  wire::Message message;
  ASSERT_EQ(wire::Decode(bytes, &message), wire::DecodeError::kNone);
  EXPECT_TRUE(VerifyUpdate(key, bytes));
  wire::SetType(bytes.data(), wire::MessageType::kReplica);  // what the switch does
  EXPECT_TRUE(VerifyUpdate(key, bytes));
  wire::SetFlags(bytes.data(), wire::kFlagLast | wire::kFlagRetransmission);  // a resend
  EXPECT_TRUE(VerifyUpdate(key, bytes));
}

TEST(UpdateAuth, AnyChangedValueOrBlockByteFailsToVerify) {
  const UpdateKey key = NewUpdateKey();
  const std::vector<std::uint8_t> bytes = SignedUpdate(key);
  for (std::size_t at = wire::kHeaderBytes; at < bytes.size(); ++at) {
    for (int bit = 0; bit < 8; ++bit) {
      std::vector<std::uint8_t> tampered = bytes;
      tampered[at] ^= static_cast<std::uint8_t>(1u << bit);
      EXPECT_FALSE(VerifyUpdate(key, tampered)) << "byte " << at << " bit " << bit;
    }
  }
}

TEST(UpdateAuth, AnyChangedHeaderBitButTheTypeAndTheResendFlagFailsToVerify) {
  const UpdateKey key = NewUpdateKey();
  const std::vector<std::uint8_t> bytes = SignedUpdate(key);
  for (std::size_t at = 0; at < wire::kHeaderBytes; ++at) {
    if (at == wire::kTypeAt) continue;
    for (int bit = 0; bit < 8; ++bit) {
      std::vector<std::uint8_t> tampered = bytes;
      tampered[at] ^= static_cast<std::uint8_t>(1u << bit);
      const bool resend_flag =
          wire::LoadBig16(tampered.data() + wire::kFlagsAt) ==
          (wire::LoadBig16(bytes.data() + wire::kFlagsAt) ^ wire::kFlagRetransmission);
      EXPECT_EQ(VerifyUpdate(key, tampered), resend_flag) << "byte " << at << " bit " << bit;
    }
  }
  // Dropping LAST (or setting it on another packet) changes the stream.
  std::vector<std::uint8_t> not_last = bytes;
  wire::SetFlags(not_last.data(), 0);
  EXPECT_FALSE(VerifyUpdate(key, not_last));
}

TEST(UpdateAuth, AnotherKeyNeitherVerifiesNorSigns) {
  const UpdateKey key = NewUpdateKey();
  const UpdateKey other = NewUpdateKey();
  ASSERT_NE(key, other);
  std::vector<std::uint8_t> bytes = SignedUpdate(key);
  EXPECT_FALSE(VerifyUpdate(other, bytes));
  EXPECT_FALSE(VerifyUpdate(UpdateKey{}, bytes));
  // An unsigned UPDATE (zero tag) verifies under no key.
  std::fill(bytes.end() - wire::kUpdateTagBytes, bytes.end(), 0);
  EXPECT_FALSE(VerifyUpdate(key, bytes));
  EXPECT_FALSE(VerifyUpdate(UpdateKey{}, bytes));
}

// An old UPDATE sent again with a later epoch (or seq, or job) written into
// it is a forgery: the epoch, seq and job id are MACed.
TEST(UpdateAuth, AnOldUpdateReplayedInALaterEpochFailsToVerify) {
  const UpdateKey key = NewUpdateKey();
  std::vector<std::uint8_t> old = SignedUpdate(key, 3);
  EXPECT_TRUE(VerifyUpdate(key, old));
  std::vector<std::uint8_t> replayed = old;
  wire::SetEpoch(replayed.data(), 4);
  EXPECT_FALSE(VerifyUpdate(key, replayed));
  replayed = old;
  wire::SetSeq(replayed.data(), 3);
  EXPECT_FALSE(VerifyUpdate(key, replayed));
  replayed = old;
  wire::StoreBig32(replayed.data() + wire::kJobIdAt, 11 + (1u << 16));  // the next incarnation
  EXPECT_FALSE(VerifyUpdate(key, replayed));
  // The same values signed for epoch 4 carry another tag.
  const std::vector<std::uint8_t> later = SignedUpdate(key, 4);
  EXPECT_FALSE(std::equal(later.end() - wire::kUpdateTagBytes, later.end(),
                          old.end() - wire::kUpdateTagBytes));
}

TEST(UpdateAuth, AMessageWithNoRoomForATagIsNeitherSignedNorVerified) {
  const UpdateKey key = NewUpdateKey();
  std::vector<std::uint8_t> short_one(wire::kHeaderBytes + wire::kUpdateTagBytes - 1);
  EXPECT_THROW(SignUpdate(key, short_one), std::invalid_argument);
  EXPECT_FALSE(VerifyUpdate(key, short_one));
  EXPECT_FALSE(VerifyUpdate(key, {}));
}

TEST(UpdateAuth, AMessageLongerThanTheFormatIsNeitherSignedNorVerified) {
  const UpdateKey key = NewUpdateKey();
  std::vector<std::uint8_t> long_one(wire::kMaxMessageBytes + 1);
  EXPECT_THROW(SignUpdate(key, long_one), std::invalid_argument);
  EXPECT_FALSE(VerifyUpdate(key, long_one));
}

TEST(UpdateAuth, TheTagIsSipHashUnderAKeyOfItsOwnNotTheJobsKey) {
  // The tag is SipHash-2-4 (16 bytes) under the key derived for the MAC, over
  // the bytes before it: computed here from libsodium directly.
  const UpdateKey key = NewUpdateKey();
  const std::vector<std::uint8_t> message = SignedUpdate(key, 3);
  const std::size_t tag_at = wire::UpdateTagAt(message.size());
  const std::array<std::uint8_t, 16> mac_key = DeriveFromKey(key, "libra update mac");
  std::array<std::uint8_t, wire::kUpdateTagBytes> expected;
  crypto_shorthash_siphashx24(expected.data(), message.data(), tag_at, mac_key.data());
  EXPECT_TRUE(std::equal(expected.begin(), expected.end(), message.begin() + tag_at));
  // Under the job's key itself (its first 16 bytes) the tag is another.
  std::array<std::uint8_t, wire::kUpdateTagBytes> raw;
  crypto_shorthash_siphashx24(raw.data(), message.data(), tag_at, key.bytes.data());
  EXPECT_FALSE(std::equal(raw.begin(), raw.end(), message.begin() + tag_at));
}

}  // namespace
}  // namespace libra::hotpath
