#include "train/checkpoint.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>

#include "wire/coding.h"

namespace libra::train {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'L', 'I', 'B', 'R', 'A', 'C', 'K', '1'};
constexpr uint32_t kVersion = 1;
// magic, 6 x u32, 3 x u64
constexpr size_t kHeaderBytes = sizeof(kMagic) + 6 * 4 + 3 * 8;
constexpr size_t kChecksumBytes = 8;

constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ULL;
constexpr uint64_t kFnvPrime = 0x100000001b3ULL;

uint64_t Fnv1a(const char* data, size_t size, uint64_t hash = kFnvOffset) {
  for (size_t i = 0; i < size; ++i) {
    hash ^= static_cast<unsigned char>(data[i]);
    hash *= kFnvPrime;
  }
  return hash;
}

std::string Errno(const std::string& what, const std::string& path) {
  return "checkpoint " + path + ": " + what + ": " + std::strerror(errno);
}

// Writes all of `bytes` to `fd`.
bool WriteAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// The directory entry of the rename must reach the disk too, or a power cut
// could lose the new name after the old file is gone.
void SyncDirectory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

std::string Prefix(uint32_t server_rank) {
  return "server-" + std::to_string(server_rank) + "-iter-";
}

// The iteration in a final file name of `server_rank`, or nullopt.
std::optional<uint64_t> IterationOf(const std::string& name, uint32_t server_rank) {
  const std::string prefix = Prefix(server_rank);
  const std::string suffix = ".ckpt";
  if (name.size() != prefix.size() + 12 + suffix.size()) return std::nullopt;
  if (name.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  if (name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) return std::nullopt;
  uint64_t iteration = 0;
  for (size_t i = prefix.size(); i < prefix.size() + 12; ++i) {
    if (name[i] < '0' || name[i] > '9') return std::nullopt;
    iteration = iteration * 10 + static_cast<uint64_t>(name[i] - '0');
  }
  return iteration;
}

}  // namespace

uint64_t HashText(const std::string& text) { return Fnv1a(text.data(), text.size()); }

std::string CheckpointFileName(uint32_t server_rank, uint64_t iteration) {
  char digits[32];
  std::snprintf(digits, sizeof(digits), "%012llu", static_cast<unsigned long long>(iteration));
  return Prefix(server_rank) + digits + ".ckpt";
}

std::string WriteCheckpoint(const std::string& dir, const ShardCheckpoint& c) {
  if (c.entries.size() != c.keys.size() * c.entry_length()) {
    throw CheckpointError("checkpoint: " + std::to_string(c.entries.size()) + " floats for " +
                          std::to_string(c.keys.size()) + " keys of " +
                          std::to_string(c.entry_length()));
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw CheckpointError("checkpoint directory " + dir + ": " + ec.message());

  wire::ByteWriter out;
  out.Reserve(kHeaderBytes + c.keys.size() * 8 + c.entries.size() * 4 + kChecksumBytes);
  out.PutBytes(kMagic, sizeof(kMagic));
  out.Put<uint32_t>(kVersion);
  out.Put<uint32_t>(c.server_rank);
  out.Put<uint32_t>(c.value_length);
  out.Put<uint32_t>(c.state_per_value);
  out.Put<uint32_t>(c.optimizer_kind);
  out.Put<uint32_t>(0);
  out.Put<uint64_t>(c.job_signature);
  out.Put<uint64_t>(c.iteration);
  out.Put<uint64_t>(c.keys.size());
  out.PutArray(std::span<const uint64_t>(c.keys));
  out.PutArray(std::span<const float>(c.entries));
  out.Put<uint64_t>(Fnv1a(out.bytes().data(), out.size()));
  const std::string bytes = out.Take();

  const std::string name = CheckpointFileName(c.server_rank, c.iteration);
  const std::string final_path = (fs::path(dir) / name).string();
  // A leading dot and a ".tmp" tail: no listing takes it for a checkpoint.
  const std::string temp_path =
      (fs::path(dir) / ("." + name + ".tmp-" + std::to_string(::getpid()))).string();
  const int fd = ::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw CheckpointError(Errno("cannot create", temp_path));
  if (!WriteAll(fd, bytes) || ::fsync(fd) != 0) {
    const std::string error = Errno("cannot write", temp_path);
    ::close(fd);
    ::unlink(temp_path.c_str());
    throw CheckpointError(error);
  }
  if (::close(fd) != 0 || ::rename(temp_path.c_str(), final_path.c_str()) != 0) {
    const std::string error = Errno("cannot store", final_path);
    ::unlink(temp_path.c_str());
    throw CheckpointError(error);
  }
  SyncDirectory(dir);
  return final_path;
}

ShardCheckpoint ReadCheckpoint(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CheckpointError(Errno("cannot open", path));
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw CheckpointError("checkpoint " + path + ": read error");
  auto fail = [&](const std::string& what) {
    return CheckpointError("checkpoint " + path + ": " + what);
  };
  if (bytes.size() < sizeof(kMagic) || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    throw fail("not a Libra checkpoint (bad magic)");
  }
  if (bytes.size() < kHeaderBytes + kChecksumBytes) {
    throw fail("truncated (" + std::to_string(bytes.size()) + " bytes, header incomplete)");
  }
  // The header's size was checked, so no read of it can run out of bytes.
  wire::ByteReader r(bytes);
  r.Skip(sizeof(kMagic));
  uint32_t version = 0;
  r.Get(&version);
  if (version != kVersion) {
    throw fail("unsupported version " + std::to_string(version) + " (this build reads " +
               std::to_string(kVersion) + ")");
  }
  ShardCheckpoint c;
  uint64_t count = 0;
  r.Get(&c.server_rank);
  r.Get(&c.value_length);
  r.Get(&c.state_per_value);
  r.Get(&c.optimizer_kind);
  r.Skip(4);  // reserved
  r.Get(&c.job_signature);
  r.Get(&c.iteration);
  r.Get(&count);
  // Sizes from the header are checked against the file before anything is
  // allocated, so a damaged count cannot ask for terabytes.
  const uint64_t entry_bytes = uint64_t{8} + uint64_t{4} * c.entry_length();
  const uint64_t body = bytes.size() - kHeaderBytes - kChecksumBytes;
  if (c.value_length == 0 || c.value_length > (1u << 20) || c.state_per_value > 16) {
    throw fail("damaged (value length " + std::to_string(c.value_length) + ", state " +
               std::to_string(c.state_per_value) + " floats per value)");
  }
  if (count > body / entry_bytes) {
    throw fail("truncated (" + std::to_string(bytes.size()) + " bytes for " +
               std::to_string(count) + " keys)");
  }
  if (count * entry_bytes != body) throw fail("damaged (the key count does not match the size)");
  const size_t checked = bytes.size() - kChecksumBytes;
  const auto stored =
      wire::LoadLittle<uint64_t>(reinterpret_cast<const uint8_t*>(bytes.data()) + checked);
  if (Fnv1a(bytes.data(), checked) != stored) throw fail("damaged (checksum mismatch)");
  c.keys.resize(count);
  c.entries.resize(count * c.entry_length());
  r.GetArray(std::span<uint64_t>(c.keys));
  r.GetArray(std::span<float>(c.entries));
  return c;
}

std::vector<uint64_t> ListCheckpoints(const std::string& dir, uint32_t server_rank) {
  std::vector<uint64_t> iterations;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (auto iteration = IterationOf(it->path().filename().string(), server_rank)) {
      iterations.push_back(*iteration);
    }
  }
  std::sort(iterations.begin(), iterations.end());
  return iterations;
}

void PruneCheckpoints(const std::string& dir, uint32_t server_rank, size_t keep) {
  std::vector<uint64_t> iterations = ListCheckpoints(dir, server_rank);
  std::error_code ec;
  for (size_t i = 0; i + keep < iterations.size(); ++i) {
    fs::remove(fs::path(dir) / CheckpointFileName(server_rank, iterations[i]), ec);
  }
  const std::string temp_prefix = "." + Prefix(server_rank);
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(temp_prefix, 0) == 0 && name.find(".ckpt.tmp-") != std::string::npos) {
      std::error_code ignored;
      fs::remove(it->path(), ignored);
    }
  }
}

std::optional<uint64_t> NewestCommonIteration(
    const std::vector<std::vector<uint64_t>>& per_server) {
  if (per_server.empty()) return std::nullopt;
  std::vector<uint64_t> common = per_server[0];
  std::sort(common.begin(), common.end());
  for (size_t s = 1; s < per_server.size(); ++s) {
    std::vector<uint64_t> theirs = per_server[s];
    std::sort(theirs.begin(), theirs.end());
    std::vector<uint64_t> both;
    std::set_intersection(common.begin(), common.end(), theirs.begin(), theirs.end(),
                          std::back_inserter(both));
    common = std::move(both);
  }
  if (common.empty()) return std::nullopt;
  return common.back();
}

}  // namespace libra::train
