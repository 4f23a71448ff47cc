// Hot-set file: a fixed little-endian header, the keys, the cells, and an
// FNV-1a checksum of everything before it. docs/hot-parameters.md has the table.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#include "hot/hot_set.h"

namespace libra::hot {
namespace {

constexpr char kMagic[8] = {'L', 'I', 'B', 'R', 'A', 'H', 'O', 'T'};
constexpr size_t kHeaderBytes = 48;
constexpr size_t kKeyRecordBytes = 20;  // key u64, frequency u64, value_len u32
constexpr size_t kCellRecordBytes = 8;  // array u32, index u32
constexpr size_t kChecksumBytes = 8;

uint64_t Fnv1a64(const uint8_t* data, size_t size) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < size; ++i) {
    hash ^= data[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}

class ByteWriter {
 public:
  void U32(uint32_t v) { Put(v, 4); }
  void U64(uint64_t v) { Put(v, 8); }
  void Bytes(const char* data, size_t size) { bytes_.insert(bytes_.end(), data, data + size); }
  std::vector<uint8_t>& bytes() { return bytes_; }

 private:
  void Put(uint64_t v, int width) {
    for (int i = 0; i < width; ++i) bytes_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  std::vector<uint8_t> bytes_;
};

class ByteReader {
 public:
  explicit ByteReader(const std::vector<uint8_t>& bytes) : bytes_(bytes) {}
  uint32_t U32() { return static_cast<uint32_t>(Get(4)); }
  uint64_t U64() { return Get(8); }
  void Skip(size_t n) { at_ += n; }

 private:
  uint64_t Get(int width) {
    uint64_t v = 0;
    for (int i = 0; i < width; ++i) v |= uint64_t{bytes_[at_ + i]} << (8 * i);
    at_ += width;
    return v;
  }
  const std::vector<uint8_t>& bytes_;
  size_t at_ = 0;
};

[[noreturn]] void Fail(const std::string& path, const std::string& what) {
  throw HotSetFileError("hot-set file " + path + ": " + what);
}

}  // namespace

void WriteHotSetFile(const HotSet& hot_set, const std::string& path) {
  ByteWriter out;
  out.Bytes(kMagic, sizeof(kMagic));
  out.U32(kHotSetFileVersion);
  out.U32(static_cast<uint32_t>(hot_set.placement()));
  out.U32(hot_set.layout().num_arrays);
  out.U32(hot_set.layout().cells_per_array);
  out.U32(hot_set.layout().num_banks);
  out.U32(0);  // reserved
  out.U64(hot_set.size());
  out.U64(hot_set.num_values());
  for (const HotKey& key : hot_set.keys()) {
    out.U64(key.key);
    out.U64(key.frequency);
    out.U32(key.value_len);
  }
  for (const CellAddress& cell : hot_set.cells()) {
    out.U32(cell.array);
    out.U32(cell.index);
  }
  out.U64(Fnv1a64(out.bytes().data(), out.bytes().size()));

  // Write beside the target and rename, so a reader never sees half a file.
  const std::string temporary = path + ".tmp";
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    if (!file) Fail(path, "cannot open " + temporary + " for writing");
    file.write(reinterpret_cast<const char*>(out.bytes().data()),
               static_cast<std::streamsize>(out.bytes().size()));
    if (!file.flush()) Fail(path, "write failed");
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    Fail(path, "cannot rename " + temporary + " into place: " + std::strerror(errno));
  }
}

HotSet ReadHotSetFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) Fail(path, std::string("cannot open: ") + std::strerror(errno));
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)),
                                   std::istreambuf_iterator<char>());
  if (bytes.size() < sizeof(kMagic) || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    Fail(path, "not a Libra hot-set file (bad magic)");
  }
  if (bytes.size() < kHeaderBytes + kChecksumBytes) {
    Fail(path, "truncated: " + std::to_string(bytes.size()) + " bytes is shorter than the header");
  }
  ByteReader in(bytes);
  in.Skip(sizeof(kMagic));
  const uint32_t version = in.U32();
  if (version != kHotSetFileVersion) {
    Fail(path, "unsupported version " + std::to_string(version) + " (this build reads version " +
                   std::to_string(kHotSetFileVersion) + ")");
  }
  const uint32_t placement = in.U32();
  SwitchLayout layout;
  layout.num_arrays = in.U32();
  layout.cells_per_array = in.U32();
  layout.num_banks = in.U32();
  in.Skip(4);
  const uint64_t num_keys = in.U64();
  const uint64_t num_values = in.U64();
  const uint64_t payload = (bytes.size() - kHeaderBytes - kChecksumBytes);
  // Compare without multiplying, so absurd counts cannot overflow.
  if (num_keys > payload / kKeyRecordBytes || num_values > payload / kCellRecordBytes ||
      num_keys * kKeyRecordBytes + num_values * kCellRecordBytes != payload) {
    Fail(path, "size " + std::to_string(bytes.size()) + " bytes does not match its header (" +
                   std::to_string(num_keys) + " keys, " + std::to_string(num_values) +
                   " values): truncated or corrupt");
  }
  const size_t checked = bytes.size() - kChecksumBytes;
  uint64_t stored_checksum = 0;
  for (int i = 0; i < 8; ++i) stored_checksum |= uint64_t{bytes[checked + i]} << (8 * i);
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
    key.key = in.U64();
    key.frequency = in.U64();
    key.value_len = in.U32();
  }
  std::vector<CellAddress> cells(num_values);
  for (CellAddress& cell : cells) {
    cell.array = in.U32();
    cell.index = in.U32();
  }
  try {
    return HotSet(layout, static_cast<PlacementKind>(placement), std::move(keys), std::move(cells));
  } catch (const std::invalid_argument& error) {
    Fail(path, error.what());
  }
}

}  // namespace libra::hot
