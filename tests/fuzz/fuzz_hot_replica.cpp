// Fuzzes what a worker does with a received REPLICA datagram: wire::Decode,
// then HotReplica::Apply. The input is a sequence of datagrams
// (fuzz_records.h) applied in order to one fresh replica. Invariants:
//   - a datagram decodes exactly when its length matches its header, and a
//     decoded one encodes back to the same header and slot words;
//   - every valid slot is counted once as advanced, stale or unknown;
//   - the replica equals a plain model: a cell takes a value only from a
//     newer epoch, and MinEpoch / MaxEpoch / Read / MissingKeys agree with it.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <vector>

#include "fuzz_hot_fixture.h"
#include "fuzz_records.h"
#include "hotpath/hot_replica.h"
#include "libra/wire.h"

namespace {

using namespace libra;

void Check(bool ok) {
  if (!ok) std::abort();
}

// What a cell holds in the model: the epoch's tag (epoch + 1, 0 = nothing)
// and the value bits.
struct ModelCell {
  std::uint32_t tag = 0;
  std::uint32_t bits = 0;
};

void CheckRoundTrip(std::span<const std::uint8_t> datagram, const wire::Message& message) {
  Check(datagram.size() == wire::EncodedSize(message.header.slot_count));
  std::vector<std::uint8_t> again(datagram.size());
  Check(wire::Encode(message.header, message.slots, again) == datagram.size());
  Check(std::equal(again.begin(), again.end(), datagram.begin()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::shared_ptr<const hot::HotSet> hot_set = fuzz::FuzzHotSet();
  hotpath::HotReplica replica(*hot_set);
  std::vector<ModelCell> model(hot_set->num_values());
  std::vector<std::uint64_t> first_value(hot_set->size() + 1, 0);
  for (std::size_t k = 0; k < hot_set->size(); ++k) {
    first_value[k + 1] = first_value[k] + hot_set->keys()[k].value_len;
  }

  for (const std::span<const std::uint8_t> datagram : fuzz::SplitRecords({data, size})) {
    wire::Message message;
    const wire::DecodeError error = wire::Decode(datagram, &message);
    if (error != wire::DecodeError::kNone) {
      // A length that matches a well-formed header is never rejected as such.
      Check(error != wire::DecodeError::kTruncated || datagram.size() < wire::kHeaderBytes ||
            datagram.size() < wire::EncodedSize(wire::LoadBig16(&datagram[10])));
      continue;
    }
    CheckRoundTrip(datagram, message);
    if (message.header.type != wire::MessageType::kReplica) continue;

    const std::span<const wire::Slot> slots(message.slots.data(), message.header.slot_count);
    const hotpath::HotReplica::ApplyResult result = replica.Apply(message.header.epoch, slots);
    std::uint32_t valid = 0, advanced = 0, stale = 0, unknown = 0;
    const std::uint32_t tag = message.header.epoch + 1;  // wraps to 0 like the replica's
    for (std::size_t j = 0; j < slots.size(); ++j) {
      if (!slots[j].valid) continue;
      ++valid;
      const auto owner = j < hot_set->layout().num_arrays
                             ? hot_set->OwnerOf({static_cast<std::uint32_t>(j), slots[j].index})
                             : std::nullopt;
      if (!owner) {
        ++unknown;
        continue;
      }
      ModelCell& cell = model[first_value[owner->key_index] + owner->offset];
      if (cell.tag >= tag) {
        ++stale;
        continue;
      }
      cell = {tag, slots[j].value};
      ++advanced;
    }
    Check(result.advanced == advanced && result.stale == stale && result.unknown == unknown);
    Check(result.advanced + result.stale + result.unknown == valid);
  }

  std::optional<std::uint32_t> min_tag, max_tag;
  for (const ModelCell& cell : model) {
    if (!min_tag || cell.tag < *min_tag) min_tag = cell.tag;
    if (!max_tag || cell.tag > *max_tag) max_tag = cell.tag;
  }
  const auto epoch_of = [](std::optional<std::uint32_t> tag) -> std::optional<std::uint32_t> {
    if (!tag || *tag == 0) return std::nullopt;
    return *tag - 1;
  };
  Check(replica.MinEpoch() == epoch_of(min_tag));
  Check(replica.MaxEpoch() == epoch_of(max_tag));

  const std::vector<hot::Key> keys = fuzz::FuzzHotKeys();
  std::vector<float> vals;
  std::vector<int> lens;
  replica.Read(keys, &vals, &lens);
  Check(vals.size() == model.size() && lens.size() == keys.size());
  for (std::size_t i = 0; i < vals.size(); ++i) {
    Check(std::bit_cast<std::uint32_t>(vals[i]) == model[i].bits);
  }
  if (max_tag && *max_tag > 0) {
    const std::uint32_t newest = *max_tag - 1;
    const std::vector<hot::Key> missing = replica.MissingKeys(newest);
    std::vector<hot::Key> expected;
    for (std::size_t k = 0; k < hot_set->size(); ++k) {
      for (std::uint64_t i = first_value[k]; i < first_value[k + 1]; ++i) {
        if (model[i].tag < *max_tag) {
          expected.push_back(hot_set->keys()[k].key);
          break;
        }
      }
    }
    Check(missing == expected);
    Check(replica.Reached(keys, newest) == expected.empty());
  }
  return 0;
}
