#include "data/dataset_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "data/feature_hash.h"

namespace libra::train {
namespace {

// 2: the file ends with a CacheChecksum of every byte before it.
constexpr uint32_t kCacheVersion = 2;

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
static_assert(sizeof(HeaderFields) == 72, "the header is written as is: no padding");

// Writes the bytes and adds them to the checksum.
bool WriteBytes(std::FILE* f, const void* data, size_t size, CacheChecksum* sum) {
  sum->Add(data, size);
  return std::fwrite(data, 1, size, f) == size;
}

template <typename T>
bool WriteArray(std::FILE* f, const std::vector<T>& v, CacheChecksum* sum) {
  return WriteBytes(f, v.data(), v.size() * sizeof(T), sum);
}

template <typename T>
void AddArray(const std::vector<T>& v, CacheChecksum* sum) {
  sum->Add(v.data(), v.size() * sizeof(T));
}

template <typename T>
bool ReadArray(std::FILE* f, std::vector<T>& v, uint64_t count) {
  v.resize(count);
  return std::fread(v.data(), sizeof(T), count, f) == count;
}

}  // namespace

void CacheChecksum::Block(const unsigned char* block) {
  for (size_t lane = 0; lane < 4; ++lane) {
    uint64_t word;
    std::memcpy(&word, block + 8 * lane, sizeof(word));
    lanes_[lane] = (lanes_[lane] ^ word) * 0x100000001b3ULL;  // the FNV prime: odd, so a bijection
  }
}

void CacheChecksum::Add(const void* data, size_t size) {
  if (size == 0) return;  // an empty array's data() may be null, which memcpy must not get
  const auto* bytes = static_cast<const unsigned char*>(data);
  total_bytes_ += size;
  if (pending_bytes_ > 0) {
    const size_t take = std::min(size, kBlockBytes - pending_bytes_);
    std::memcpy(pending_ + pending_bytes_, bytes, take);
    pending_bytes_ += take;
    bytes += take;
    size -= take;
    if (pending_bytes_ < kBlockBytes) return;
    Block(pending_);
    pending_bytes_ = 0;
  }
  for (; size >= kBlockBytes; bytes += kBlockBytes, size -= kBlockBytes) Block(bytes);
  std::memcpy(pending_, bytes, size);
  pending_bytes_ = size;
}

uint64_t CacheChecksum::Finish() const {
  CacheChecksum last = *this;
  // The tail, zero-padded; the length folded in below tells the padding apart
  // from real zeros.
  if (last.pending_bytes_ > 0) {
    std::memset(last.pending_ + last.pending_bytes_, 0, kBlockBytes - last.pending_bytes_);
    last.Block(last.pending_);
  }
  uint64_t h = Mix64(total_bytes_);
  for (const uint64_t lane : last.lanes_) h = Mix64(h ^ lane);  // a bijection of each lane
  return h;
}

uint64_t CacheChecksumOf(std::span<const uint8_t> bytes) {
  CacheChecksum sum;
  sum.Add(bytes.data(), bytes.size());
  return sum.Finish();
}

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
  CacheChecksum sum;
  bool ok = WriteBytes(f.get(), &h, sizeof(h), &sum) &&
            WriteBytes(f.get(), info.first_bad_line.data(), info.first_bad_line.size(), &sum) &&
            WriteArray(f.get(), data.labels, &sum) && WriteArray(f.get(), data.row_begin, &sum) &&
            WriteArray(f.get(), data.keys, &sum) && WriteArray(f.get(), data.values, &sum) &&
            WriteArray(f.get(), data.fields, &sum);
  const uint64_t checksum = sum.Finish();
  ok = ok && std::fwrite(&checksum, sizeof(checksum), 1, f.get()) == 1;
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
                            h.nonzeros * (sizeof(FeatureKey) + sizeof(float) + sizeof(uint32_t)) +
                            sizeof(uint64_t);  // the checksum
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
  uint64_t stored = 0;
  ok = ok && std::fread(&stored, sizeof(stored), 1, f.get()) == 1;
  if (!ok) throw DataError(path + ": cache is truncated");
  CacheChecksum sum;
  sum.Add(&h, sizeof(h));
  sum.Add(info->first_bad_line.data(), info->first_bad_line.size());
  AddArray(d.labels, &sum);
  AddArray(d.row_begin, &sum);
  AddArray(d.keys, &sum);
  AddArray(d.values, &sum);
  AddArray(d.fields, &sum);
  if (sum.Finish() != stored) throw DataError(path + ": cache is damaged (checksum mismatch)");
  if (d.row_begin.front() != 0 || d.row_begin.back() != h.nonzeros) {
    throw DataError(path + ": cache row index is corrupt");
  }
  for (size_t r = 0; r < h.rows; ++r) {
    if (d.row_begin[r] > d.row_begin[r + 1]) throw DataError(path + ": cache row index is corrupt");
  }
  *data = std::move(d);
}

}  // namespace libra::train
