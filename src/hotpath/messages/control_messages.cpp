#include "hotpath/messages/control_messages.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <vector>

#include "wire/coding.h"
#include "wire/wire.h"

namespace libra::hotpath {

using wire::ByteReader;
using wire::ByteWriter;

std::string Encode(const JoinRequest& join) {
  ByteWriter w;
  w.Put(static_cast<uint8_t>(join.role));
  w.Put(join.rank);
  w.Put(join.address.ipv4);
  w.Put(join.address.port);
  w.Put(join.max_abs_value);
  w.Put(join.epoch);
  w.Put(join.plain_epoch_seconds);
  w.Put(join.counted_pairs);
  w.Put(join.counted_values);
  w.Put<uint8_t>(join.scale_follows ? 1 : 0);
  // Compact, since a worker's JOIN lists up to a switch's worth of keys
  // (~50k: 1.25 MB at fixed width, to encrypt, send and read while the job
  // trains): each key as its distance from the one before, less one (they
  // ascend), and varints, about 10 bytes a count for hashed keys.
  w.Put<uint64_t>(join.counts.size());
  w.Reserve(w.bytes().size() + join.counts.size() * 10);
  for (size_t i = 0; i < join.counts.size(); ++i) {
    const KeyCount& c = join.counts[i];
    if (i > 0 && c.key <= join.counts[i - 1].key) {
      throw std::invalid_argument("a JOIN's counts must ascend by key");
    }
    w.PutVarint(i == 0 ? c.key : c.key - join.counts[i - 1].key - 1);
    w.PutVarint(c.value_len);
    w.PutVarint(c.updates);
    w.PutVarint(c.server);
  }
  return w.Take();
}

namespace {

// The JOIN's fixed fields, leaving `r` at its count of counts.
bool GetJoinHeader(ByteReader& r, JoinRequest* join) {
  uint8_t role = 0;
  if (!r.Get(&role) || !r.Get(&join->rank) || !r.Get(&join->address.ipv4) ||
      !r.Get(&join->address.port) || !r.Get(&join->max_abs_value) || !r.Get(&join->epoch) ||
      !r.Get(&join->plain_epoch_seconds) || !r.Get(&join->counted_pairs) ||
      !r.Get(&join->counted_values)) {
    return false;
  }
  uint8_t scale_follows = 0;
  if (!r.Get(&scale_follows) || scale_follows > 1) return false;
  if (role != 1 && role != 2) return false;
  join->role = static_cast<JoinRequest::Role>(role);
  join->scale_follows = scale_follows == 1;
  return true;
}

}  // namespace

std::optional<JoinRequest> DecodeJoinHeader(const std::string& body) {
  ByteReader r(body);
  JoinRequest join;
  if (!GetJoinHeader(r, &join)) return std::nullopt;
  return join;
}

std::optional<JoinRequest> DecodeJoin(const std::string& body) {
  ByteReader r(body);
  JoinRequest join;
  uint64_t n = 0;
  if (!GetJoinHeader(r, &join) || !r.GetCount(4, &n)) return std::nullopt;  // 4 varints a count
  join.counts.resize(n);
  for (size_t i = 0; i < n; ++i) {
    KeyCount& c = join.counts[i];
    uint64_t gap = 0;
    if (!r.GetVarint(&gap) || !r.GetVarint32(&c.value_len) || !r.GetVarint(&c.updates) ||
        !r.GetVarint32(&c.server)) {
      return std::nullopt;
    }
    if (i == 0) {
      c.key = gap;
      continue;
    }
    const uint64_t previous = join.counts[i - 1].key;
    if (gap >= UINT64_MAX - previous) return std::nullopt;  // past the largest key
    c.key = previous + gap + 1;
  }
  if (!r.AtEnd()) return std::nullopt;
  return join;
}

std::string Encode(const ScaleReport& scale) {
  ByteWriter w;
  w.Put(scale.rank);
  w.Put(scale.max_abs_value);
  return w.Take();
}

std::optional<ScaleReport> DecodeScale(const std::string& body) {
  ByteReader r(body);
  ScaleReport scale;
  if (!r.Get(&scale.rank) || !r.Get(&scale.max_abs_value) || !r.AtEnd()) return std::nullopt;
  return scale;
}

std::string Encode(const WorkerDone& done) {
  ByteWriter w;
  w.Put(done.rank);
  w.Put(done.next_epoch);
  return w.Take();
}

std::optional<WorkerDone> DecodeWorkerDone(const std::string& body) {
  ByteReader r(body);
  WorkerDone done;
  if (!r.Get(&done.rank) || !r.Get(&done.next_epoch) || !r.AtEnd()) return std::nullopt;
  return done;
}

std::string Encode(const Install& install) {
  ByteWriter w;
  w.Put<uint8_t>(install.enabled ? 1 : 0);
  w.PutString(install.reason);
  w.Put(install.job_id);
  w.Put(install.first_epoch);
  w.Put(install.num_workers);
  w.Put<int32_t>(install.scale_bits);
  if (!install.enabled) return w.Take();
  const libra::hot::HotSet& set = *install.hot_set;
  w.Put(set.layout().num_arrays);
  w.Put(set.layout().cells_per_array);
  w.Put(set.layout().num_banks);
  w.Put(static_cast<uint32_t>(set.placement()));
  // Compact, since every node receives it at the start of the job: keys as
  // differences from the previous one (the hot set lists them ascending
  // within a frequency), small numbers as varints, and each value's cell as
  // the difference of its row-major address (index * arrays + array) from
  // the previous one, which the placements fill in order: about 12 bytes a
  // one-value key instead of 28.
  w.Put<uint64_t>(set.size());
  uint64_t previous_key = 0;
  for (const libra::hot::HotKey& k : set.keys()) {
    w.PutDelta(previous_key, k.key);
    previous_key = k.key;
    w.PutVarint(k.value_len);
    w.PutVarint(k.frequency);
  }
  w.Put<uint64_t>(set.num_values());
  uint64_t previous_cell = 0;
  for (const libra::hot::CellAddress& cell : set.cells()) {
    const uint64_t address = uint64_t{cell.index} * set.layout().num_arrays + cell.array;
    w.PutDelta(previous_cell, address);
    previous_cell = address;
  }
  w.Put<uint64_t>(install.owners.size());
  for (uint32_t owner : install.owners) w.PutVarint(owner);
  w.PutArray(std::span<const uint8_t>(install.update_key.bytes));
  return w.Take();
}

std::optional<Install> DecodeInstall(const std::string& body) {
  ByteReader r(body);
  Install install;
  uint8_t enabled = 0;
  int32_t scale = 0;
  if (!r.Get(&enabled) || !r.GetString(&install.reason) || !r.Get(&install.job_id) ||
      !r.Get(&install.first_epoch) || !r.Get(&install.num_workers) || !r.Get(&scale)) {
    return std::nullopt;
  }
  install.enabled = enabled == 1;
  install.scale_bits = scale;
  if (!install.enabled) return r.AtEnd() ? std::optional<Install>(install) : std::nullopt;

  libra::hot::SwitchLayout layout;
  uint32_t placement = 0;
  uint64_t num_keys = 0, num_cells = 0;
  // A key takes at least 3 bytes (three varints), a cell and an owner 1.
  if (!r.Get(&layout.num_arrays) || !r.Get(&layout.cells_per_array) || !r.Get(&layout.num_banks) ||
      !r.Get(&placement) || layout.num_arrays == 0 || !r.GetCount(3, &num_keys)) {
    return std::nullopt;
  }
  std::vector<libra::hot::HotKey> keys(num_keys);
  uint64_t previous_key = 0;
  for (libra::hot::HotKey& k : keys) {
    if (!r.GetDelta(previous_key, &k.key) || !r.GetVarint32(&k.value_len) ||
        !r.GetVarint(&k.frequency)) {
      return std::nullopt;
    }
    previous_key = k.key;
  }
  if (!r.GetCount(1, &num_cells)) return std::nullopt;
  std::vector<libra::hot::CellAddress> cells(num_cells);
  uint64_t previous_cell = 0;
  for (libra::hot::CellAddress& cell : cells) {
    uint64_t address = 0;
    if (!r.GetDelta(previous_cell, &address)) return std::nullopt;
    previous_cell = address;
    const uint64_t index = address / layout.num_arrays;
    if (index > UINT32_MAX) return std::nullopt;
    cell.array = static_cast<uint32_t>(address % layout.num_arrays);
    cell.index = static_cast<uint32_t>(index);
  }
  uint64_t num_owners = 0;
  if (!r.GetCount(1, &num_owners) || (num_owners != 0 && num_owners != num_keys)) {
    return std::nullopt;
  }
  install.owners.resize(num_owners);
  for (uint32_t& owner : install.owners) {
    if (!r.GetVarint32(&owner)) return std::nullopt;
  }
  if (!r.GetArray(std::span<uint8_t>(install.update_key.bytes)) || !r.AtEnd()) {
    return std::nullopt;
  }
  // Checked before HotSet allocates a table over the whole layout.
  if (layout.capacity() > libra::hot::kMaxReadLayoutCells) return std::nullopt;
  if (placement != static_cast<uint32_t>(libra::hot::PlacementKind::kHeat) &&
      placement != static_cast<uint32_t>(libra::hot::PlacementKind::kHash)) {
    return std::nullopt;
  }
  try {
    layout.Validate();
    install.hot_set = std::make_shared<const libra::hot::HotSet>(
        layout, static_cast<libra::hot::PlacementKind>(placement), std::move(keys),
        std::move(cells));
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
  return install;
}

std::string Encode(const Repair& repair) {
  ByteWriter w;
  w.Put(repair.epoch);
  w.PutList(repair.keys);
  w.PutList(repair.vals);
  return w.Take();
}

std::optional<Repair> DecodeRepair(const std::string& body) {
  ByteReader r(body);
  Repair repair;
  if (!r.Get(&repair.epoch) || !r.GetList(&repair.keys) || !r.GetList(&repair.vals) || !r.AtEnd()) {
    return std::nullopt;
  }
  return repair;
}

std::string Encode(const PacketRepair& repair) {
  ByteWriter w;
  w.Put(repair.epoch);
  w.PutList(repair.seqs);
  w.Put(repair.tail_from);
  w.Put<std::uint64_t>(repair.packets.size());
  for (const std::string& packet : repair.packets) w.PutString(packet);
  return w.Take();
}

std::optional<PacketRepair> DecodePacketRepair(const std::string& body) {
  ByteReader r(body);
  PacketRepair repair;
  std::uint64_t count = 0;
  // Each packet takes at least its u32 length.
  if (!r.Get(&repair.epoch) || !r.GetList(&repair.seqs) || !r.Get(&repair.tail_from) ||
      !r.GetCount(sizeof(std::uint32_t), &count)) {
    return std::nullopt;
  }
  repair.packets.resize(count);
  for (std::string& packet : repair.packets) {
    if (!r.GetString(&packet, wire::kMaxMessageBytes)) return std::nullopt;
  }
  if (!r.AtEnd()) return std::nullopt;
  return repair;
}

bool WriteInstallFile(const std::string& path, const Install& install) {
  std::error_code error;
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, error);
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    Install without_key = install;
    without_key.update_key = UpdateKey{};
    const std::string body = Encode(without_key);
    out.write(body.data(), static_cast<std::streamsize>(body.size()));
    out.flush();
    if (!out) return false;
  }
  return std::rename(temporary.c_str(), path.c_str()) == 0;
}

std::optional<Install> ReadInstallFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  const std::string body((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return DecodeInstall(body);
}

std::string Encode(const SwitchDown& down) {
  ByteWriter w;
  w.Put(down.generation);
  w.Put(down.epoch);
  w.PutString(down.reason);
  return w.Take();
}

std::optional<SwitchDown> DecodeSwitchDown(const std::string& body) {
  ByteReader r(body);
  SwitchDown down;
  if (!r.Get(&down.generation) || !r.Get(&down.epoch) || !r.GetString(&down.reason) || !r.AtEnd()) {
    return std::nullopt;
  }
  return down;
}

std::string Encode(const FallbackPush& push) {
  ByteWriter w;
  w.Put(push.epoch);
  w.Put(push.worker);
  w.PutList(push.keys);
  w.PutList(push.vals);
  return w.Take();
}

std::optional<FallbackPush> DecodeFallbackPush(const std::string& body) {
  ByteReader r(body);
  FallbackPush push;
  if (!r.Get(&push.epoch) || !r.Get(&push.worker) || !r.GetList(&push.keys) ||
      !r.GetList(&push.vals) || !r.AtEnd()) {
    return std::nullopt;
  }
  return push;
}

std::string Encode(const WrittenKeys& keys) {
  ByteWriter w;
  w.Put(keys.epoch);
  w.Put(keys.worker);
  w.PutList(keys.key_set);
  w.Put(keys.sum_term);
  return w.Take();
}

std::optional<WrittenKeys> DecodeWrittenKeys(const std::string& body) {
  ByteReader r(body);
  WrittenKeys keys;
  if (!r.Get(&keys.epoch) || !r.Get(&keys.worker) || !r.GetList(&keys.key_set) ||
      !r.Get(&keys.sum_term) || !r.AtEnd()) {
    return std::nullopt;
  }
  return keys;
}

std::string Encode(const Resume& resume) {
  ByteWriter w;
  w.Put(resume.generation);
  w.Put(resume.job_id);
  w.Put(resume.first_epoch);
  w.Put(resume.worker);
  return w.Take();
}

std::optional<Resume> DecodeResume(const std::string& body) {
  ByteReader r(body);
  Resume resume;
  if (!r.Get(&resume.generation) || !r.Get(&resume.job_id) || !r.Get(&resume.first_epoch) ||
      !r.Get(&resume.worker) || !r.AtEnd()) {
    return std::nullopt;
  }
  return resume;
}

std::vector<uint32_t> HotKeyOwners(const libra::hot::HotSet& hot_set,
                                   const std::vector<uint32_t>& owners,
                                   const std::vector<ps::Range>& server_ranges) {
  if (!owners.empty()) return owners;
  const auto keys = hot_set.keys();
  std::vector<uint32_t> owner_of_key(keys.size(), 0);
  for (size_t i = 0; i < keys.size(); ++i) {
    for (size_t s = 0; s < server_ranges.size(); ++s) {
      if (keys[i].key >= server_ranges[s].begin() && keys[i].key < server_ranges[s].end()) {
        owner_of_key[i] = static_cast<uint32_t>(s);
      }
    }
  }
  return owner_of_key;
}

}  // namespace libra::hotpath
