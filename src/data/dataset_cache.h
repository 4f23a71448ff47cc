// Libra's binary cache of a parsed data set: the CSR arrays written raw after
// a small header, so that a text file is parsed once and later runs (and every
// worker of a job) load it at disk speed. A checksum over every byte before it
// ends the file: a cache damaged on disk would otherwise train a different
// model without a word (version 1 had none).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
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

// The cache's checksum, fed the file's bytes in order in pieces of any size.
// Four 64-bit FNV-1a-style lanes over 8-byte words (a multiply per 8 bytes
// and lane, so checking costs little next to reading the file), folded with
// the length: a change to any one word always changes the sum.
class CacheChecksum {
 public:
  void Add(const void* data, size_t size);
  uint64_t Finish() const;

 private:
  void Block(const unsigned char* block);

  static constexpr size_t kBlockBytes = 32;
  uint64_t lanes_[4] = {0xcbf29ce484222325ULL, 0x84222325cbf29ce4ULL, 0x9e3779b97f4a7c15ULL,
                        0xbf58476d1ce4e5b9ULL};
  unsigned char pending_[kBlockBytes] = {};
  size_t pending_bytes_ = 0;
  uint64_t total_bytes_ = 0;
};

uint64_t CacheChecksumOf(std::span<const uint8_t> bytes);

std::string CachePathFor(const std::string& source_path);

// Size and modification time of `path`; false if it cannot be stat'ed.
bool StatSource(const std::string& path, uint64_t* bytes, int64_t* mtime_ns);

bool HasCacheMagic(const std::string& path);

// Writes to a temporary file and renames it into place, so that workers that
// build the same cache at once never see a half-written one. Returns false
// (and leaves nothing behind) if the directory is not writable.
bool WriteDatasetCache(const std::string& path, const Dataset& data, const CacheInfo& info);

// Throws DataError naming the file if it is not a complete, undamaged cache
// of this version.
void ReadDatasetCache(const std::string& path, Dataset* data, CacheInfo* info);

}  // namespace libra::train
