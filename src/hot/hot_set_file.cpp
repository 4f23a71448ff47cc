// Hot-set file: a fixed little-endian header, the keys, the cells, and an
// FNV-1a checksum of everything before it. docs/hot-parameters.md has the table.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#include "hot/hot_set.h"
#include "wire/coding.h"

namespace libra::hot {
namespace {

constexpr char kMagic[8] = {'L', 'I', 'B', 'R', 'A', 'H', 'O', 'T'};
constexpr size_t kHeaderBytes = 48;
constexpr size_t kKeyRecordBytes = 20;  // key u64, frequency u64, value_len u32
constexpr size_t kCellRecordBytes = 8;  // array u32, index u32
constexpr size_t kChecksumBytes = 8;

uint64_t Fnv1a64(const char* data, size_t size) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < size; ++i) {
    hash ^= static_cast<uint8_t>(data[i]);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

[[noreturn]] void Fail(const std::string& path, const std::string& what) {
  throw HotSetFileError("hot-set file " + path + ": " + what);
}

}  // namespace

void WriteHotSetFile(const HotSet& hot_set, const std::string& path) {
  wire::ByteWriter out;
  out.PutBytes(kMagic, sizeof(kMagic));
  out.Put<uint32_t>(kHotSetFileVersion);
  out.Put(static_cast<uint32_t>(hot_set.placement()));
  out.Put<uint32_t>(hot_set.layout().num_arrays);
  out.Put<uint32_t>(hot_set.layout().cells_per_array);
  out.Put<uint32_t>(hot_set.layout().num_banks);
  out.Put<uint32_t>(0);  // reserved
  out.Put<uint64_t>(hot_set.size());
  out.Put<uint64_t>(hot_set.num_values());
  for (const HotKey& key : hot_set.keys()) {
    out.Put<uint64_t>(key.key);
    out.Put<uint64_t>(key.frequency);
    out.Put<uint32_t>(key.value_len);
  }
  for (const CellAddress& cell : hot_set.cells()) {
    out.Put<uint32_t>(cell.array);
    out.Put<uint32_t>(cell.index);
  }
  out.Put<uint64_t>(Fnv1a64(out.bytes().data(), out.size()));

  // Write beside the target and rename, so a reader never sees half a file.
  const std::string temporary = path + ".tmp";
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    if (!file) Fail(path, "cannot open " + temporary + " for writing");
    file.write(out.bytes().data(), static_cast<std::streamsize>(out.size()));
    if (!file.flush()) Fail(path, "write failed");
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    Fail(path, "cannot rename " + temporary + " into place: " + std::strerror(errno));
  }
}

HotSet ReadHotSetFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) Fail(path, std::string("cannot open: ") + std::strerror(errno));
  const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (bytes.size() < sizeof(kMagic) || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    Fail(path, "not a Libra hot-set file (bad magic)");
  }
  if (bytes.size() < kHeaderBytes + kChecksumBytes) {
    Fail(path, "truncated: " + std::to_string(bytes.size()) + " bytes is shorter than the header");
  }
  // The sizes are checked before the fields are read, so no read below can
  // run out of bytes.
  wire::ByteReader in(bytes);
  in.Skip(sizeof(kMagic));
  uint32_t version = 0;
  in.Get(&version);
  if (version != kHotSetFileVersion) {
    Fail(path, "unsupported version " + std::to_string(version) + " (this build reads version " +
                   std::to_string(kHotSetFileVersion) + ")");
  }
  uint32_t placement = 0;
  SwitchLayout layout;
  uint64_t num_keys = 0, num_values = 0;
  in.Get(&placement);
  in.Get(&layout.num_arrays);
  in.Get(&layout.cells_per_array);
  in.Get(&layout.num_banks);
  in.Skip(4);  // reserved
  in.Get(&num_keys);
  in.Get(&num_values);
  const uint64_t payload = (bytes.size() - kHeaderBytes - kChecksumBytes);
  // Compare without multiplying, so absurd counts cannot overflow.
  if (num_keys > payload / kKeyRecordBytes || num_values > payload / kCellRecordBytes ||
      num_keys * kKeyRecordBytes + num_values * kCellRecordBytes != payload) {
    Fail(path, "size " + std::to_string(bytes.size()) + " bytes does not match its header (" +
                   std::to_string(num_keys) + " keys, " + std::to_string(num_values) +
                   " values): truncated or corrupt");
  }
  const size_t checked = bytes.size() - kChecksumBytes;
  const auto stored_checksum =
      wire::LoadLittle<uint64_t>(reinterpret_cast<const uint8_t*>(bytes.data()) + checked);
  if (Fnv1a64(bytes.data(), checked) != stored_checksum) {
    Fail(path, "checksum mismatch: the file is corrupt");
  }
  if (placement != static_cast<uint32_t>(PlacementKind::kHeat) &&
      placement != static_cast<uint32_t>(PlacementKind::kHash)) {
    Fail(path, "unknown placement kind " + std::to_string(placement));
  }

  if (layout.capacity() > kMaxReadLayoutCells) {
    Fail(path, "layout of " + std::to_string(layout.num_arrays) + " x " +
                   std::to_string(layout.cells_per_array) + " cells is larger than any switch (" +
                   std::to_string(kMaxReadLayoutCells) + " cells at most)");
  }

  std::vector<HotKey> keys(num_keys);
  for (HotKey& key : keys) {
    in.Get(&key.key);
    in.Get(&key.frequency);
    in.Get(&key.value_len);
  }
  std::vector<CellAddress> cells(num_values);
  for (CellAddress& cell : cells) {
    in.Get(&cell.array);
    in.Get(&cell.index);
  }
  try {
    return HotSet(layout, static_cast<PlacementKind>(placement), std::move(keys), std::move(cells));
  } catch (const std::invalid_argument& error) {
    Fail(path, error.what());
  }
}

}  // namespace libra::hot
