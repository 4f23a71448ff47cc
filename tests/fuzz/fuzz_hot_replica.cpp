// Fuzzes what a worker does with a received REPLICA datagram: wire::Decode,
// then HotReplica::Apply. The input is a sequence of datagrams
// (fuzz_records.h) applied in order to fresh replicas of three
// configurations (two servers splitting the keys; one server with a later
// first epoch; servers 0 and 2 with 1 publishing nothing, starting just
// below the epoch wrap). A datagram of type UPDATE stands for a repair
// (HotReplica::ApplyKeys, see RepairOf). Invariants:
//   - a datagram decodes exactly when the format's rules say it is well
//     formed (length, RESULT masks and row blocks agree with the header),
//     into the cells its row blocks hold, and a decoded one encodes back to
//     the same bytes (fuzz_wire_model.h);
//   - every value of an accepted packet is counted once as advanced, stale
//     or unknown, a rejected packet changes nothing;
//   - the replica equals the model of fuzz_replica_model.h after every
//     datagram (Apply/ApplyKeys results, MinEpoch, MaxEpoch), and at the end
//     Read, MissingKeys and Reached agree with it at the interesting epochs.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <span>
#include <vector>

#include "fuzz_hot_fixture.h"
#include "fuzz_records.h"
#include "fuzz_replica_model.h"
#include "fuzz_wire_model.h"
#include "hotpath/worker/hot_replica.h"
#include "wire/wire.h"

namespace {

using namespace libra;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz_hot_replica: invariant broken: %s\n", what);
    std::abort();
  }
}

struct Config {
  std::vector<std::uint16_t> owners;
  std::uint32_t first_epoch;
};

const std::vector<Config>& Configs() {
  static const std::vector<Config> configs = {
      {fuzz::FuzzKeyOwners(), 0},
      {{}, 1},
      {{0, 2, 2, 0, 2}, 0xfffffffdu},
  };
  return configs;
}

// A repair read from an UPDATE datagram: each value of the row block of row
// r names key `r % keys`, whose values are the value's bits plus 0, 1, ...
// A key may be named again, by two values of a block or by two blocks
// (ApplyKeys counts distinct keys: {10, 10, 10} must not complete server 0,
// whose keys 12 and 14 never came; the fuzzer found that it once did).
struct Repair {
  std::vector<std::uint32_t> key_indices;
  std::vector<hot::Key> keys;
  std::vector<std::uint32_t> bits;
  std::vector<float> vals;
};

Repair RepairOf(const hot::HotSet& hot_set, const wire::Message& m) {
  Repair repair;
  for (std::size_t i = 0; i < m.header.slot_count; ++i) {
    const wire::CellValue& cell = m.cells[i];
    const auto k = static_cast<std::uint32_t>(cell.index % hot_set.size());
    repair.key_indices.push_back(k);
    repair.keys.push_back(hot_set.keys()[k].key);
    for (std::uint32_t v = 0; v < hot_set.keys()[k].value_len; ++v) {
      repair.bits.push_back(cell.value + v);
      repair.vals.push_back(std::bit_cast<float>(repair.bits.back()));
    }
  }
  return repair;
}

void CheckOutcome(const hotpath::HotReplica::ApplyResult& got,
                  const fuzz::ReplicaModel::Outcome& want) {
  Check(got.rejected == want.rejected, "rejected");
  Check(got.advanced == want.advanced, "advanced");
  Check(got.stale == want.stale, "stale");
  Check(got.unknown == want.unknown, "unknown");
  Check(got.epochs_completed == want.epochs_completed, "epochs_completed");
}

void CheckEpochs(const hotpath::HotReplica& replica, const fuzz::ReplicaModel& model) {
  Check(replica.MinEpoch() == model.MinEpoch(), "MinEpoch");
  Check(replica.MaxEpoch() == model.MaxEpoch(), "MaxEpoch");
  // Every epoch some server completed has arrived.
  const auto min = model.MinEpoch(), max = model.MaxEpoch();
  Check(!min || (max && *min <= *max), "MinEpoch <= MaxEpoch");
}

void CheckQueries(const hot::HotSet& hot_set, const hotpath::HotReplica& replica,
                  const fuzz::ReplicaModel& model, std::uint32_t first_epoch,
                  std::optional<std::uint32_t> last_epoch) {
  const std::vector<hot::Key> keys = fuzz::FuzzHotKeys();
  std::vector<float> vals;
  std::vector<int> lens;
  replica.Read(keys, &vals, &lens);
  Check(vals.size() == model.cells().size() && lens.size() == keys.size(), "Read sizes");
  for (std::size_t i = 0; i < vals.size(); ++i) {
    Check(std::bit_cast<std::uint32_t>(vals[i]) == model.cells()[i].bits, "Read values");
  }
  for (std::size_t k = 0; k < keys.size(); ++k) {
    Check(lens[k] == static_cast<int>(hot_set.keys()[k].value_len), "Read lens");
  }

  std::vector<std::optional<std::uint32_t>> epochs = {std::nullopt, first_epoch, last_epoch};
  for (const auto e : {model.MinEpoch(), model.MaxEpoch()}) {
    if (!e) continue;
    epochs.push_back(*e);
    epochs.push_back(*e + 1);
    epochs.push_back(*e - 1);
  }
  for (const std::optional<std::uint32_t> e : epochs) {
    bool all = true;
    for (std::uint32_t k = 0; k < keys.size(); ++k) {
      const bool reached = model.KeyReached(k, e);
      all = all && reached;
      Check(replica.Reached(std::span(&keys[k], 1), e) == reached, "Reached of a key");
    }
    Check(replica.Reached(keys, e) == all, "Reached of all keys");
    if (!e) continue;
    std::vector<hot::Key> expected;
    for (const std::uint32_t k : model.MissingKeys(*e)) expected.push_back(keys[k]);
    Check(replica.MissingKeys(*e) == expected, "MissingKeys");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::shared_ptr<const hot::HotSet> hot_set = fuzz::FuzzHotSet();
  std::vector<hotpath::HotReplica> replicas;
  std::vector<fuzz::ReplicaModel> models;
  replicas.reserve(Configs().size());
  for (const Config& config : Configs()) {
    replicas.emplace_back(*hot_set, config.owners, config.first_epoch);
    models.emplace_back(*hot_set, config.owners, config.first_epoch);
  }

  std::optional<std::uint32_t> last_epoch;
  for (const std::span<const std::uint8_t> datagram : fuzz::SplitRecords({data, size})) {
    wire::Message message;
    const wire::DecodeError error = wire::Decode(datagram, &message);
    if (const char* failure = fuzz::DecodeFailure(datagram, error, message)) Check(false, failure);
    if (error != wire::DecodeError::kNone) continue;
    if (const char* failure = fuzz::RoundTripFailure(datagram, message)) Check(false, failure);
    const wire::Header& h = message.header;
    if (h.type == wire::MessageType::kReplica) {
      const std::span<const wire::CellValue> cells(message.cells.data(), h.slot_count);
      for (std::size_t c = 0; c < replicas.size(); ++c) {
        const hotpath::HotReplica::ApplyResult got = replicas[c].Apply(h, cells);
        CheckOutcome(got, models[c].Apply(h, cells));
        Check(got.advanced + got.stale + got.unknown == (got.rejected ? 0 : cells.size()),
              "value count");
        CheckEpochs(replicas[c], models[c]);
      }
    } else if (h.type == wire::MessageType::kUpdate) {
      const Repair repair = RepairOf(*hot_set, message);
      for (std::size_t c = 0; c < replicas.size(); ++c) {
        CheckOutcome(replicas[c].ApplyKeys(h.epoch, repair.keys, repair.vals),
                     models[c].ApplyKeys(h.epoch, repair.key_indices, repair.bits));
        CheckEpochs(replicas[c], models[c]);
      }
    } else {
      continue;
    }
    last_epoch = h.epoch;
  }

  for (std::size_t c = 0; c < replicas.size(); ++c) {
    CheckQueries(*hot_set, replicas[c], models[c], Configs()[c].first_epoch, last_epoch);
  }
  return 0;
}
