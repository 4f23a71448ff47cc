#include "data/dataset_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace libra::train {
namespace {

constexpr uint32_t kCacheVersion = 1;

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

// Fixed-size part of the header, written as is (the cache is a local
// artefact, so host byte order is fine).
struct HeaderFields {
  char magic[8];
  uint32_t version;
  uint32_t num_fields;
  uint64_t source_bytes;
  int64_t source_mtime_ns;
  uint64_t rows;
  uint64_t nonzeros;
  uint64_t lines;
  uint64_t bad_lines;
  uint64_t first_bad_line_bytes;
};

template <typename T>
bool WriteArray(std::FILE* f, const std::vector<T>& v) {
  return std::fwrite(v.data(), sizeof(T), v.size(), f) == v.size();
}

template <typename T>
bool ReadArray(std::FILE* f, std::vector<T>& v, uint64_t count) {
  v.resize(count);
  return std::fread(v.data(), sizeof(T), count, f) == count;
}

}  // namespace

std::string CachePathFor(const std::string& source_path) { return source_path + ".libracache"; }

bool StatSource(const std::string& path, uint64_t* bytes, int64_t* mtime_ns) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return false;
  *bytes = static_cast<uint64_t>(st.st_size);
  *mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  return true;
}

bool HasCacheMagic(const std::string& path) {
  File f(std::fopen(path.c_str(), "rb"));
  if (!f) return false;
  char magic[sizeof(kCacheMagic)];
  return std::fread(magic, 1, sizeof(magic), f.get()) == sizeof(magic) &&
         std::memcmp(magic, kCacheMagic, sizeof(magic)) == 0;
}

bool WriteDatasetCache(const std::string& path, const Dataset& data, const CacheInfo& info) {
  const std::string temp = path + ".tmp." + std::to_string(::getpid());
  File f(std::fopen(temp.c_str(), "wb"));
  if (!f) return false;
  HeaderFields h{};
  std::memcpy(h.magic, kCacheMagic, sizeof(h.magic));
  h.version = kCacheVersion;
  h.num_fields = data.num_fields;
  h.source_bytes = info.source_bytes;
  h.source_mtime_ns = info.source_mtime_ns;
  h.rows = data.rows();
  h.nonzeros = data.nonzeros();
  h.lines = info.lines;
  h.bad_lines = info.bad_lines;
  h.first_bad_line_bytes = info.first_bad_line.size();
  bool ok = std::fwrite(&h, sizeof(h), 1, f.get()) == 1 &&
            std::fwrite(info.first_bad_line.data(), 1, info.first_bad_line.size(), f.get()) ==
                info.first_bad_line.size() &&
            WriteArray(f.get(), data.labels) && WriteArray(f.get(), data.row_begin) &&
            WriteArray(f.get(), data.keys) && WriteArray(f.get(), data.values) &&
            WriteArray(f.get(), data.fields);
  ok = std::fclose(f.release()) == 0 && ok;
  if (!ok || std::rename(temp.c_str(), path.c_str()) != 0) {
    std::remove(temp.c_str());
    return false;
  }
  return true;
}

void ReadDatasetCache(const std::string& path, Dataset* data, CacheInfo* info) {
  File f(std::fopen(path.c_str(), "rb"));
  if (!f) throw DataError(path + ": cannot open: " + std::strerror(errno));
  HeaderFields h{};
  if (std::fread(&h, sizeof(h), 1, f.get()) != 1 ||
      std::memcmp(h.magic, kCacheMagic, sizeof(kCacheMagic)) != 0) {
    throw DataError(path + ": not a Libra data cache (bad header)");
  }
  if (h.version != kCacheVersion) {
    throw DataError(path + ": cache version " + std::to_string(h.version) + ", expected " +
                    std::to_string(kCacheVersion));
  }
  // Check the sizes the header promises against the file before allocating.
  uint64_t file_bytes = 0;
  int64_t mtime = 0;
  StatSource(path, &file_bytes, &mtime);
  const uint64_t expected = sizeof(h) + h.first_bad_line_bytes + h.rows * sizeof(float) +
                            (h.rows + 1) * sizeof(uint64_t) +
                            h.nonzeros * (sizeof(FeatureKey) + sizeof(float) + sizeof(uint32_t));
  if (h.rows > file_bytes || h.nonzeros > file_bytes || h.first_bad_line_bytes > file_bytes ||
      expected != file_bytes) {
    throw DataError(path + ": cache is truncated or corrupt (" + std::to_string(file_bytes) +
                    " bytes, header implies " + std::to_string(expected) + ")");
  }
  info->source_bytes = h.source_bytes;
  info->source_mtime_ns = h.source_mtime_ns;
  info->lines = h.lines;
  info->bad_lines = h.bad_lines;
  info->first_bad_line.resize(h.first_bad_line_bytes);
  Dataset d;
  d.num_fields = h.num_fields;
  bool ok = std::fread(info->first_bad_line.data(), 1, h.first_bad_line_bytes, f.get()) ==
                h.first_bad_line_bytes &&
            ReadArray(f.get(), d.labels, h.rows) && ReadArray(f.get(), d.row_begin, h.rows + 1) &&
            ReadArray(f.get(), d.keys, h.nonzeros) && ReadArray(f.get(), d.values, h.nonzeros) &&
            ReadArray(f.get(), d.fields, h.nonzeros);
  if (!ok) throw DataError(path + ": cache is truncated");
  if (d.row_begin.front() != 0 || d.row_begin.back() != h.nonzeros) {
    throw DataError(path + ": cache row index is corrupt");
  }
  for (size_t r = 0; r < h.rows; ++r) {
    if (d.row_begin[r] > d.row_begin[r + 1]) throw DataError(path + ": cache row index is corrupt");
  }
  *data = std::move(d);
}

}  // namespace libra::train
