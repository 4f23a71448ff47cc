// Fuzzes the hot-set file reader (ReadHotSetFile). The first byte picks the
// mode: odd, the rest of the input is a file body and the harness appends
// its correct FNV-1a checksum (so that the fuzzer gets past the checksum to
// the header and records); even, the rest is the whole file as is.
// Invariants:
//   - only HotSetFileError escapes the reader;
//   - a file that reads writes back (WriteHotSetFile) to the same bytes,
//     apart from the reserved header word, which the writer zeroes;
//   - the hot set read is self-consistent: each key found at its index,
//     each of its cells owned by it.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "fuzz_temp_file.h"
#include "hot/hot_set.h"

namespace {

using namespace libra;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz_hot_set_file: invariant broken: %s\n", what);
    std::abort();
  }
}

constexpr std::size_t kReservedAt = 28;  // header word the writer sets to 0

std::uint64_t Checksum(std::span<const std::uint8_t> bytes) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (const std::uint8_t b : bytes) {
    hash ^= b;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::vector<std::uint8_t> file(data + 1, data + size);
  if ((data[0] & 1) != 0) {
    const std::uint64_t sum = Checksum(file);
    for (int i = 0; i < 8; ++i) file.push_back(static_cast<std::uint8_t>(sum >> (8 * i)));
  }
  static const std::string path = fuzz::ScratchPath("hot-set");
  static const std::string again_path = fuzz::ScratchPath("hot-set-again");
  fuzz::WriteFileBytes(path, file);

  hot::HotSet hot_set;
  try {
    hot_set = hot::ReadHotSetFile(path);
  } catch (const hot::HotSetFileError&) {
    return 0;
  }

  for (std::uint32_t k = 0; k < hot_set.size(); ++k) {
    const hot::HotKey& key = hot_set.keys()[k];
    Check(hot_set.Find(key.key) == k, "key found at its index");
    const auto cells = hot_set.CellsOf(k);
    Check(cells.size() == key.value_len, "cells per key");
    for (std::uint32_t v = 0; v < cells.size(); ++v) {
      const auto owner = hot_set.OwnerOf(cells[v]);
      Check(owner && owner->key_index == k && owner->offset == v, "cell owned by its key");
    }
  }

  hot::WriteHotSetFile(hot_set, again_path);
  std::vector<std::uint8_t> again = fuzz::ReadFileBytes(again_path);
  Check(again.size() == file.size(), "rewritten size");
  // Compare all but the reserved word and the checksum that covers it.
  for (std::size_t i = 0; i < again.size() - 8; ++i) {
    if (i >= kReservedAt && i < kReservedAt + 4) continue;
    Check(again[i] == file[i], "rewritten bytes");
  }
  const hot::HotSet reread = hot::ReadHotSetFile(again_path);
  Check(reread.layout().num_arrays == hot_set.layout().num_arrays &&
            reread.layout().cells_per_array == hot_set.layout().cells_per_array &&
            reread.layout().num_banks == hot_set.layout().num_banks &&
            reread.placement() == hot_set.placement(),
        "reread layout");
  Check(std::equal(reread.cells().begin(), reread.cells().end(), hot_set.cells().begin(),
                   hot_set.cells().end()),
        "reread cells");
  return 0;
}
