// Fuzzes the hot path's control-plane decoders (JOIN, INSTALL, REPAIR,
// SWITCH_DOWN, FALLBACK_PUSH, RESUME, WRITTEN_KEYS, REPAIR_PACKETS, SCALE,
// DONE): the
// first byte picks the decoder, the rest is the SimpleApp body. Invariants:
//   - a body that decodes encodes back to the same bytes (INSTALL: the same
//     up to what the encoder normalises: the enabled byte is 0 or 1);
//   - decoding the re-encoded body gives the same message again;
//   - an enabled INSTALL carries a hot set that passed HotSet's checks and
//     an owner list that is empty or one per key;
//   - a FALLBACK_PUSH that decodes goes into a server's FallbackAggregator
//     (two workers, as worker 0 and then as worker 1, for the same epoch):
//     it is summed or refused with a reason, never crashes, and a completed
//     epoch holds one value per cell of its keys;
//   - a REPAIR_PACKETS answer carries no packet longer than a datagram;
//   - a WRITTEN_KEYS set merges into a bitmap whole or not at all, and one
//     that merges, re-encoded, names the same keys.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fuzz_hot_fixture.h"
#include "hotpath/messages/control_messages.h"
#include "hotpath/messages/written_keys.h"
#include "hotpath/server/fallback_aggregator.h"

namespace {

using namespace libra::hotpath;

void Check(bool ok) {
  if (!ok) std::abort();
}

template <typename T, typename Decoder>
void RoundTrip(const std::string& body, Decoder decode, bool exact) {
  const std::optional<T> decoded = decode(body);
  if (!decoded) return;
  const std::string again = Encode(*decoded);
  if (exact) Check(again == body);
  const std::optional<T> twice = decode(again);
  Check(twice.has_value());
  Check(Encode(*twice) == again);
}

// A server owning every key of the fuzz hot set, with two workers.
void SumAsAServer(const FallbackPush& push) {
  static const std::shared_ptr<const libra::hot::HotSet> hot_set = libra::fuzz::FuzzHotSet();
  std::vector<libra::hot::Key> owned;
  for (const auto& key : hot_set->keys()) owned.push_back(key.key);
  libra::hotpath::FallbackAggregator sums(hot_set, owned, 2, 16);
  std::optional<libra::hotpath::CollectedEpoch> done;
  for (std::uint32_t worker : {push.worker, push.worker ^ 1u}) {
    std::string error;
    done = sums.Add(push.epoch, worker, push.keys, push.vals, &error);
    if (!done) Check(!error.empty() || sums.pending_epochs() == 1);
  }
  if (!done) return;
  std::uint64_t values = 0;
  for (const int len : done->lens) values += static_cast<std::uint64_t>(len);
  Check(done->keys.size() == done->lens.size() && values == done->vals.size());
}

// Merges a key set into bitmaps of a few universes (the set's own size, as a
// bitmap, among them).
void MergeAsAServer(const WrittenKeys& report) {
  const std::uint32_t sizes[] = {
      0, 1, 7, 8, 9, 1000, static_cast<std::uint32_t>(report.key_set.size() * 8)};
  for (const std::uint32_t universe : sizes) {
    std::vector<std::uint8_t> bitmap(KeyBitmapBytes(universe), 0);
    const std::vector<std::uint8_t> before = bitmap;
    if (!MergeKeySet(report.key_set, universe, bitmap)) {
      Check(bitmap == before);
      continue;
    }
    std::vector<std::uint32_t> positions;
    for (std::uint32_t k = 0; k < universe; ++k) {
      if (KeyBit(bitmap, k)) positions.push_back(k);
    }
    std::vector<std::uint8_t> again(KeyBitmapBytes(universe), 0);
    Check(MergeKeySet(EncodeKeySet(positions, universe), universe, again));
    Check(again == bitmap);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string body(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 10) {
    case 0: {
      RoundTrip<JoinRequest>(body, DecodeJoin, true);
      // The header the controller reads first is the whole JOIN's.
      const std::optional<JoinRequest> join = DecodeJoin(body);
      const std::optional<JoinRequest> header = DecodeJoinHeader(body);
      if (join) {
        Check(header.has_value() && header->counts.empty());
        Check(header->rank == join->rank && header->counted_pairs == join->counted_pairs &&
              header->counted_values == join->counted_values);
      }
      break;
    }
    case 1: {
      RoundTrip<Install>(body, DecodeInstall, !body.empty() && (body[0] == 0 || body[0] == 1));
      const std::optional<Install> install = DecodeInstall(body);
      if (install && install->enabled) {
        Check(install->hot_set != nullptr);
        Check(install->owners.empty() || install->owners.size() == install->hot_set->size());
        std::uint64_t values = 0;
        for (const auto& key : install->hot_set->keys()) values += key.value_len;
        Check(values == install->hot_set->num_values());
      }
      break;
    }
    case 2:
      RoundTrip<Repair>(body, DecodeRepair, true);
      break;
    case 3:
      RoundTrip<SwitchDown>(body, DecodeSwitchDown, true);
      break;
    case 4: {
      RoundTrip<FallbackPush>(body, DecodeFallbackPush, true);
      const std::optional<FallbackPush> push = DecodeFallbackPush(body);
      if (push) SumAsAServer(*push);
      break;
    }
    case 5:
      RoundTrip<Resume>(body, DecodeResume, true);
      break;
    case 6: {
      RoundTrip<WrittenKeys>(body, DecodeWrittenKeys, true);
      const std::optional<WrittenKeys> report = DecodeWrittenKeys(body);
      if (report) MergeAsAServer(*report);
      break;
    }
    case 7: {
      RoundTrip<PacketRepair>(body, DecodePacketRepair, true);
      const std::optional<PacketRepair> repair = DecodePacketRepair(body);
      if (repair) {
        for (const std::string& packet : repair->packets) {
          Check(packet.size() <= libra::wire::kMaxMessageBytes);
        }
      }
      break;
    }
    case 8:
      RoundTrip<ScaleReport>(body, DecodeScale, true);
      break;
    default:
      RoundTrip<WorkerDone>(body, DecodeWorkerDone, true);
      break;
  }
  return 0;
}
