// Libra's binary cache of a parsed data set: the CSR arrays written raw after
// a small header, so that a text file is parsed once and later runs (and every
// worker of a job) load it at disk speed.
#pragma once

#include <cstdint>
#include <string>

#include "data/dataset.h"

namespace libra::train {

inline constexpr char kCacheMagic[8] = {'L', 'I', 'B', 'R', 'A', 'D', 'S', '1'};

// What the cache remembers about the text it was built from. A cache is stale
// once the source's size or modification time differ.
struct CacheInfo {
  uint64_t source_bytes = 0;
  int64_t source_mtime_ns = 0;
  uint64_t lines = 0, bad_lines = 0;
  std::string first_bad_line;
};

std::string CachePathFor(const std::string& source_path);

// Size and modification time of `path`; false if it cannot be stat'ed.
bool StatSource(const std::string& path, uint64_t* bytes, int64_t* mtime_ns);

bool HasCacheMagic(const std::string& path);

// Writes to a temporary file and renames it into place, so that workers that
// build the same cache at once never see a half-written one. Returns false
// (and leaves nothing behind) if the directory is not writable.
bool WriteDatasetCache(const std::string& path, const Dataset& data, const CacheInfo& info);

// Throws DataError naming the file if it is not a complete cache.
void ReadDatasetCache(const std::string& path, Dataset* data, CacheInfo* info);

}  // namespace libra::train
