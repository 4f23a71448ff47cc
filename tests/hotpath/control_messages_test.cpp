// Unit tests of the hot path's control plane: the JOIN/INSTALL encoding (a
// malformed body is rejected, never trusted) and the controller's choices.
#include "hotpath/messages/control_messages.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <stdexcept>

#include "common/temp_dir.h"
#include "hot/placement.h"
#include "hotpath/controller/controller.h"

namespace libra::hotpath {
namespace {

JoinRequest SampleJoin() {
  JoinRequest join;
  join.role = JoinRequest::Role::kWorker;
  join.rank = 3;
  join.address = {0x7f000001, 4242};
  join.max_abs_value = 2.5f;
  join.plain_epoch_seconds = 0.125f;
  join.counted_pairs = 30;
  join.counted_values = 45;
  join.scale_follows = true;
  join.counts = {{7, 1, 10, 0}, {9, 4, 3, 1}, {~0ull, 2, 1, 2}};
  return join;
}

Install SampleInstall() {
  std::vector<libra::hot::HotKey> keys = {{5, 1, 100}, {8, 3, 50}, {2, 2, 10}};
  libra::hot::SwitchLayout layout{4, 16, 2};
  Install install;
  install.enabled = true;
  install.job_id = 9;
  install.first_epoch = 20;
  install.num_workers = 4;
  install.scale_bits = 18;
  install.hot_set = std::make_shared<const libra::hot::HotSet>(
      libra::hot::PlaceHotSet(keys, layout, libra::hot::HeatPlacement()));
  install.owners = {0, 1, 0};
  install.update_key = NewUpdateKey();
  return install;
}

// Keys 5, 8 and 2: the controller's owners when it sent them, else the
// server whose key range holds each key.
TEST(HotPathMessages, HotKeyOwnersFollowTheControllerOrTheKeyRanges) {
  const Install install = SampleInstall();
  const std::vector<ps::Range> ranges = {ps::Range(0, 6), ps::Range(6, 100)};
  EXPECT_EQ(HotKeyOwners(*install.hot_set, install.owners, ranges),
            (std::vector<uint32_t>{0, 1, 0}));
  EXPECT_EQ(HotKeyOwners(*install.hot_set, {}, ranges), (std::vector<uint32_t>{0, 1, 0}));
  EXPECT_EQ(HotKeyOwners(*install.hot_set, {}, {ps::Range(0, 3), ps::Range(3, 100)}),
            (std::vector<uint32_t>{1, 1, 0}));
}

// A JOIN's fields before its counts.
void ExpectSameJoinHeader(const JoinRequest& back, const JoinRequest& join) {
  EXPECT_EQ(back.role, join.role);
  EXPECT_EQ(back.rank, join.rank);
  EXPECT_EQ(back.address, join.address);
  EXPECT_EQ(back.max_abs_value, join.max_abs_value);
  EXPECT_EQ(back.epoch, join.epoch);
  EXPECT_EQ(back.plain_epoch_seconds, join.plain_epoch_seconds);
  EXPECT_EQ(back.counted_pairs, join.counted_pairs);
  EXPECT_EQ(back.counted_values, join.counted_values);
  EXPECT_EQ(back.scale_follows, join.scale_follows);
}

TEST(HotPathMessages, JoinRoundTrips) {
  const JoinRequest join = SampleJoin();
  const std::optional<JoinRequest> back = DecodeJoin(Encode(join));
  ASSERT_TRUE(back);
  ExpectSameJoinHeader(*back, join);
  ASSERT_EQ(back->counts.size(), join.counts.size());
  for (size_t i = 0; i < join.counts.size(); ++i) {
    EXPECT_EQ(back->counts[i].key, join.counts[i].key);
    EXPECT_EQ(back->counts[i].value_len, join.counts[i].value_len);
    EXPECT_EQ(back->counts[i].updates, join.counts[i].updates);
    EXPECT_EQ(back->counts[i].server, join.counts[i].server);
  }
}

// The controller reads a JOIN's fixed fields first and its counts only
// when the cost model needs them: the header stands even where the counts
// are cut short, and it is the whole decoder's.
TEST(HotPathMessages, AJoinsHeaderIsReadWithoutItsCounts) {
  const JoinRequest join = SampleJoin();
  const std::string body = Encode(join);
  const std::optional<JoinRequest> header = DecodeJoinHeader(body);
  ASSERT_TRUE(header);
  ExpectSameJoinHeader(*header, join);
  EXPECT_TRUE(header->counts.empty());
  const std::string cut = body.substr(0, body.size() - 2);
  EXPECT_FALSE(DecodeJoin(cut));
  EXPECT_TRUE(DecodeJoinHeader(cut));
  const size_t header_bytes = 1 + 4 + 4 + 2 + 4 + 4 + 4 + 8 + 8 + 1;
  for (size_t n = 0; n < header_bytes; ++n) EXPECT_FALSE(DecodeJoinHeader(body.substr(0, n))) << n;
  std::string no_role = body;
  no_role[0] = 3;
  EXPECT_FALSE(DecodeJoinHeader(no_role));
  std::string bad_flag = body;
  bad_flag[header_bytes - 1] = 2;  // scale_follows is 0 or 1
  EXPECT_FALSE(DecodeJoinHeader(bad_flag));
}

// A worker that joined at its first pull reports its first push's largest
// value in a SCALE: rank and magnitude, nothing more.
TEST(HotPathMessages, ScaleRoundTripsAndRejectsEveryTruncationAndTrailingByte) {
  const ScaleReport scale{5, 0.1875f};
  const std::string body = Encode(scale);
  EXPECT_EQ(body.size(), 8u);
  const std::optional<ScaleReport> back = DecodeScale(body);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->rank, 5u);
  EXPECT_EQ(back->max_abs_value, 0.1875f);
  for (size_t n = 0; n < body.size(); ++n) EXPECT_FALSE(DecodeScale(body.substr(0, n))) << n;
  EXPECT_FALSE(DecodeScale(body + "x"));
}

// A worker's DONE (and PUSHED_PAST, the same body): rank and next epoch.
TEST(HotPathMessages, DoneRoundTripsAndRejectsEveryTruncationAndTrailingByte) {
  const WorkerDone done{3, 41};
  const std::string body = Encode(done);
  EXPECT_EQ(body.size(), 8u);
  const std::optional<WorkerDone> back = DecodeWorkerDone(body);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->rank, 3u);
  EXPECT_EQ(back->next_epoch, 41u);
  for (size_t n = 0; n < body.size(); ++n) EXPECT_FALSE(DecodeWorkerDone(body.substr(0, n))) << n;
  EXPECT_FALSE(DecodeWorkerDone(body + "x"));
}

// A worker's JOIN lists up to a switch's worth of hashed keys: each count
// takes about 10 bytes (the key's distance from the one before as a varint,
// then three small varints), not the 24 of fixed-width fields.
TEST(HotPathMessages, AJoinOfFiftyThousandHashedKeysTakesAboutTenBytesACount) {
  std::mt19937_64 rng(7);
  std::vector<uint64_t> keys(50000);
  for (uint64_t& key : keys) key = rng();
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  JoinRequest join = SampleJoin();
  join.counts.clear();
  for (uint64_t key : keys) join.counts.push_back({key, 1, 1 + key % 30, uint32_t(key % 2)});
  const std::string body = Encode(join);
  EXPECT_LE(body.size(), 64 + 11 * keys.size());  // 10.2 a count with this seed
  const std::optional<JoinRequest> back = DecodeJoin(body);
  ASSERT_TRUE(back);
  ASSERT_EQ(back->counts.size(), keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    ASSERT_EQ(back->counts[i].key, keys[i]);
    ASSERT_EQ(back->counts[i].updates, 1 + keys[i] % 30);
    ASSERT_EQ(back->counts[i].server, keys[i] % 2);
  }
}

// The counts ascend by key, each key once: the controller merges the JOINs
// as sorted runs. The encoder refuses other orders; the decoder cannot
// produce them, nor a key past the largest.
TEST(HotPathMessages, AJoinsCountsAscendByKeyEachKeyOnce) {
  JoinRequest join = SampleJoin();
  join.counts = {{9, 1, 1, 0}, {7, 1, 1, 0}};
  EXPECT_THROW(Encode(join), std::invalid_argument);
  join.counts = {{7, 1, 1, 0}, {7, 1, 1, 0}};
  EXPECT_THROW(Encode(join), std::invalid_argument);
  // The last count of SampleJoin is the largest key; one more after it
  // (a gap of 0) would wrap around.
  std::string body = Encode(SampleJoin());
  const char more[] = {0, 1, 1, 0};  // gap, value_len, updates, server
  body.append(more, sizeof more);
  const size_t count_at = 1 + 4 + 4 + 2 + 4 + 4 + 4 + 8 + 8 + 1;  // role ... scale_follows
  ASSERT_EQ(static_cast<uint8_t>(body[count_at]), 3);
  body[count_at] = 4;
  EXPECT_FALSE(DecodeJoin(body));
}

TEST(HotPathMessages, InstallRoundTripsTheHotSetAndItsPlacement) {
  const Install install = SampleInstall();
  const std::optional<Install> back = DecodeInstall(Encode(install));
  ASSERT_TRUE(back);
  EXPECT_TRUE(back->enabled);
  EXPECT_EQ(back->job_id, 9u);
  EXPECT_EQ(back->first_epoch, 20u);
  EXPECT_EQ(back->num_workers, 4u);
  EXPECT_EQ(back->scale_bits, 18);
  EXPECT_EQ(back->owners, install.owners);
  EXPECT_EQ(back->update_key, install.update_key);
  ASSERT_EQ(back->hot_set->size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(back->hot_set->keys()[i].key, install.hot_set->keys()[i].key);
    EXPECT_EQ(back->hot_set->keys()[i].value_len, install.hot_set->keys()[i].value_len);
  }
  ASSERT_EQ(back->hot_set->num_values(), install.hot_set->num_values());
  for (size_t i = 0; i < install.hot_set->num_values(); ++i) {
    EXPECT_EQ(back->hot_set->cells()[i], install.hot_set->cells()[i]);
  }
}

// Every node receives the INSTALL when the job starts, over its own link:
// a whole-switch hot set of one-value keys with owners takes under 16 bytes
// a key (random 64-bit keys take 8 of them), and comes back exactly.
TEST(HotPathMessages, ALargeInstallIsCompactAndExact) {
  std::vector<libra::hot::HotKey> keys;
  std::mt19937_64 rng(7);
  for (uint32_t k = 0; k < 40000; ++k) keys.push_back({rng(), 1, 1 + rng() % 50});
  Install install;
  install.enabled = true;
  install.hot_set = std::make_shared<const libra::hot::HotSet>(libra::hot::PlaceHotSet(
      keys, libra::hot::SwitchLayout{32, 4096, 2}, libra::hot::HeatPlacement()));
  for (uint32_t k = 0; k < 40000; ++k) install.owners.push_back(k % 3);
  const std::string body = Encode(install);
  EXPECT_LT(body.size(), 16u * keys.size());  // 32 with fixed-width fields
  const std::optional<Install> back = DecodeInstall(body);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->owners, install.owners);
  ASSERT_EQ(back->hot_set->size(), keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(back->hot_set->keys()[i].key, install.hot_set->keys()[i].key);
    EXPECT_EQ(back->hot_set->keys()[i].frequency, install.hot_set->keys()[i].frequency);
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(back->hot_set->cells()[i], install.hot_set->cells()[i]);
  }
  EXPECT_EQ(Encode(*back), body);
}

// A varint longer than it needs to be would decode to a body that encodes
// differently: refused, like one that runs past 64 bits.
TEST(HotPathMessages, InstallVarintsMustBeShortestAndFitSixtyFourBits) {
  const std::string body = Encode(SampleInstall());
  // The owners are the last three varints (0, 1, 0), before the key:
  // stretch the last one.
  const std::string key = body.substr(body.size() - UpdateKey::kBytes);
  const std::string owners = body.substr(0, body.size() - UpdateKey::kBytes);
  std::string overlong = owners;
  overlong.back() = static_cast<char>(0x80);
  overlong.push_back(0);
  EXPECT_FALSE(DecodeInstall(overlong + key));
  std::string too_wide =
      owners.substr(0, owners.size() - 1) + std::string(9, '\xff') + "\x02" + key;
  EXPECT_FALSE(DecodeInstall(too_wide));
  EXPECT_TRUE(DecodeInstall(body));
}

// The key that signs UPDATEs goes to the nodes with the INSTALL, each job
// its own, but a saved INSTALL (kept with the checkpoints, longer than the
// job) holds none: a resumed job draws a new one.
TEST(HotPathMessages, TheUpdateKeyTravelsWithTheInstallButIsNotSaved) {
  const Install install = SampleInstall();
  EXPECT_NE(install.update_key, UpdateKey{});
  EXPECT_NE(install.update_key, NewUpdateKey());
  const std::optional<Install> back = DecodeInstall(Encode(install));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->update_key, install.update_key);
  const libra::train::testing::TempDir dir;
  const std::string path = dir.File("job.install");
  ASSERT_TRUE(WriteInstallFile(path, install));
  const std::optional<Install> saved = ReadInstallFile(path);
  ASSERT_TRUE(saved);
  EXPECT_EQ(saved->update_key, UpdateKey{});
  EXPECT_EQ(saved->owners, install.owners);
}

TEST(HotPathMessages, ADisabledInstallCarriesItsReason) {
  Install install;
  install.reason = "no switch";
  const std::optional<Install> back = DecodeInstall(Encode(install));
  ASSERT_TRUE(back);
  EXPECT_FALSE(back->enabled);
  EXPECT_EQ(back->reason, "no switch");
}

TEST(HotPathMessages, EveryTruncationAndTrailingByteIsRejected) {
  const std::string join = Encode(SampleJoin());
  const std::string install = Encode(SampleInstall());
  for (size_t n = 0; n < join.size(); ++n) EXPECT_FALSE(DecodeJoin(join.substr(0, n))) << n;
  for (size_t n = 0; n < install.size(); ++n) {
    EXPECT_FALSE(DecodeInstall(install.substr(0, n))) << n;
  }
  EXPECT_FALSE(DecodeJoin(join + "x"));
  EXPECT_FALSE(DecodeInstall(install + "x"));
}

// The switch-failure messages: what a node reports, a worker's hot values
// for a server, and the epoch the hot path resumes at.
TEST(HotPathMessages, SwitchFailureMessagesRoundTripAndRejectEveryTruncation) {
  const SwitchDown down{2, 40, "the switch did not take epoch 40"};
  FallbackPush push;
  push.epoch = 41;
  push.worker = 3;
  push.keys = {5, 9};
  push.vals = {0.5f, -1.0f, 2.0f};
  const Resume resume{3, 0x30001, 57, 6};

  const std::optional<SwitchDown> down_back = DecodeSwitchDown(Encode(down));
  ASSERT_TRUE(down_back);
  EXPECT_EQ(down_back->generation, 2u);
  EXPECT_EQ(down_back->epoch, 40u);
  EXPECT_EQ(down_back->reason, down.reason);
  const std::optional<FallbackPush> push_back = DecodeFallbackPush(Encode(push));
  ASSERT_TRUE(push_back);
  EXPECT_EQ(push_back->epoch, 41u);
  EXPECT_EQ(push_back->worker, 3u);
  EXPECT_EQ(push_back->keys, push.keys);
  EXPECT_EQ(push_back->vals, push.vals);
  const std::optional<Resume> resume_back = DecodeResume(Encode(resume));
  ASSERT_TRUE(resume_back);
  EXPECT_EQ(resume_back->generation, 3u);
  EXPECT_EQ(resume_back->job_id, 0x30001u);
  EXPECT_EQ(resume_back->first_epoch, 57u);
  EXPECT_EQ(resume_back->worker, 6u);

  const std::string down_body = Encode(down), push_body = Encode(push),
                    resume_body = Encode(resume);
  for (size_t n = 0; n < down_body.size(); ++n)
    EXPECT_FALSE(DecodeSwitchDown(down_body.substr(0, n)));
  for (size_t n = 0; n < push_body.size(); ++n) {
    EXPECT_FALSE(DecodeFallbackPush(push_body.substr(0, n))) << n;
  }
  for (size_t n = 0; n < resume_body.size(); ++n)
    EXPECT_FALSE(DecodeResume(resume_body.substr(0, n)));
  EXPECT_FALSE(DecodeSwitchDown(down_body + "x"));
  EXPECT_FALSE(DecodeFallbackPush(push_body + "x"));
  EXPECT_FALSE(DecodeResume(resume_body + "x"));
}

TEST(HotPathMessages, AnInconsistentPlacementIsRejected) {
  const std::string encoded = Encode(SampleInstall());
  // The key ends the body; before it, the last cell (before the owner list)
  // points to array 0, index 0 like another value: two values in one cell.
  const std::string key = encoded.substr(encoded.size() - UpdateKey::kBytes);
  std::string body = encoded.substr(0, encoded.size() - UpdateKey::kBytes);
  const size_t owners_bytes = 8 + 3 * 4;
  const size_t last_cell = body.size() - owners_bytes - 8;
  const size_t first_cell = last_cell - 8 * (SampleInstall().hot_set->num_values() - 1);
  body.replace(last_cell, 8, body.substr(first_cell, 8));
  EXPECT_FALSE(DecodeInstall(body + key));
}

TEST(HotPathMessages, ALayoutNoSwitchHoldsIsRejectedBeforeAllocatingIt) {
  // Found by fuzz_hotpath_messages: cells_per_array 2^25 made HotSet
  // allocate an owner table of gigabytes.
  const Install install = SampleInstall();
  std::string body = Encode(install);
  const size_t cells_per_array = 1 + 4 + install.reason.size() + 4 * 4 + 4;
  const uint32_t huge = 1u << 25;
  body.replace(cells_per_array, 4, reinterpret_cast<const char*>(&huge), 4);
  EXPECT_FALSE(DecodeInstall(body));
}

TEST(HotPathController, ScaleLeavesHeadroomForEveryWorkersSum) {
  for (uint32_t workers : {1u, 4u, 64u}) {
    for (float max_abs : {1e-3f, 0.5f, 7.0f, 3000.0f}) {
      const int f = Controller::ChooseScaleBits(workers, max_abs);
      EXPECT_GE(f, 0);
      EXPECT_LE(f, 30);  // the switch's finest scale
      if (f > 0) {
        EXPECT_LE(double(workers) * max_abs * std::ldexp(1.0, f) * 16, 2147483648.0);
      }
    }
  }
  EXPECT_EQ(Controller::ChooseScaleBits(4, 0.0f), 16);  // nothing seen
}

TEST(HotPathController, ScaleIsTheLargestThatLeavesTheHeadroomUpToTheSwitchsFinest) {
  // 4 x 0.14 x 2^27 x 16 = 1.2e9 fits an int32, 2^28 would not: F = 27,
  // finer than float32's 24 bits for values below 1.
  EXPECT_EQ(Controller::ChooseScaleBits(4, 0.14f), 27);
  EXPECT_EQ(Controller::ChooseScaleBits(1, 1e-3f), 30);  // the switch's finest
  EXPECT_EQ(Controller::ChooseScaleBits(64, 1e7f), 0);   // no room: the coarsest
}

}  // namespace
}  // namespace libra::hotpath

namespace libra::hotpath {
namespace {

// A packet repair: the request (numbers and a tail) and the answer (the
// packets' bytes) round-trip; every truncation, a trailing byte and a
// packet longer than any datagram are rejected.
TEST(HotPathMessages, PacketRepairRoundTripsAndRejectsWhatNoServerSends) {
  PacketRepair repair;
  repair.epoch = 12;
  repair.seqs = {1, 4};
  repair.tail_from = 9;
  repair.packets = {std::string("\x01\x02\x03", 3), std::string(200, '\x7f')};
  const std::string body = Encode(repair);
  const std::optional<PacketRepair> back = DecodePacketRepair(body);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->epoch, 12u);
  EXPECT_EQ(back->seqs, repair.seqs);
  EXPECT_EQ(back->tail_from, 9u);
  EXPECT_EQ(back->packets, repair.packets);
  EXPECT_EQ(DecodePacketRepair(Encode(PacketRepair{}))->tail_from, kNoStreamTail);

  for (size_t n = 0; n < body.size(); ++n) EXPECT_FALSE(DecodePacketRepair(body.substr(0, n))) << n;
  EXPECT_FALSE(DecodePacketRepair(body + "x"));
  PacketRepair oversized;
  oversized.packets = {std::string(wire::kMaxMessageBytes + 1, '\0')};
  EXPECT_FALSE(DecodePacketRepair(Encode(oversized)));
}

}  // namespace
}  // namespace libra::hotpath
