// Fuzzes the hot path's control-plane decoders (JOIN, INSTALL, REPAIR): the
// first byte picks the decoder, the rest is the SimpleApp body. Invariants:
//   - a body that decodes encodes back to the same bytes (INSTALL: the same
//     up to what the encoder normalises: the enabled byte is 0 or 1);
//   - decoding the re-encoded body gives the same message again;
//   - an enabled INSTALL carries a hot set that passed HotSet's checks and
//     an owner list that is empty or one per key.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "hotpath_messages.h"

namespace {

using namespace ps::hotpath;

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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string body(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 3) {
    case 0:
      RoundTrip<JoinRequest>(body, DecodeJoin, true);
      break;
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
    default:
      RoundTrip<Repair>(body, DecodeRepair, true);
      break;
  }
  return 0;
}
