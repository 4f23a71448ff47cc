// Fuzzes the binary data-set cache reader (ReadDatasetCache) on a scratch
// file holding the input. The first byte picks the mode: odd, the rest of the
// input is a cache without its checksum and the harness appends the correct
// one (so that the fuzzer gets past the checksum to the sizes and the row
// index); even, the rest is the whole file as is. Invariants:
//   - only DataError escapes the reader, and it allocates no more than the
//     file's size justifies (libFuzzer's malloc limit catches the rest);
//   - a cache that reads is a consistent Dataset (CSR index from 0 to the
//     number of nonzeros, never decreasing, arrays of matching sizes);
//   - writing what was read (WriteDatasetCache) gives back the same bytes.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "data/dataset_cache.h"
#include "fuzz_temp_file.h"

namespace {

using namespace libra::train;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz_dataset_cache: invariant broken: %s\n", what);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = libra::fuzz::ScratchPath("cache");
  static const std::string again_path = libra::fuzz::ScratchPath("cache-again");
  if (size == 0) return 0;
  std::vector<std::uint8_t> file(data + 1, data + size);
  if ((data[0] & 1) != 0) {
    const std::uint64_t sum = CacheChecksumOf(file);
    for (int i = 0; i < 8; ++i) file.push_back(static_cast<std::uint8_t>(sum >> (8 * i)));
  }
  libra::fuzz::WriteFileBytes(path, file);

  Dataset d;
  CacheInfo info;
  try {
    ReadDatasetCache(path, &d, &info);
  } catch (const DataError&) {
    return 0;
  }
  Check(d.row_begin.size() == d.rows() + 1 && d.row_begin.front() == 0 &&
            d.row_begin.back() == d.nonzeros(),
        "CSR row index");
  for (std::size_t r = 0; r < d.rows(); ++r) {
    Check(d.row_begin[r] <= d.row_begin[r + 1], "rows never end before they begin");
  }
  Check(d.values.size() == d.nonzeros() && d.fields.size() == d.nonzeros(), "CSR arrays");

  Check(WriteDatasetCache(again_path, d, info), "rewrite");
  const std::vector<std::uint8_t> again = libra::fuzz::ReadFileBytes(again_path);
  Check(again == file, "rewritten bytes");
  return 0;
}
