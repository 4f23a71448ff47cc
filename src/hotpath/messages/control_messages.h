// The messages of the hot path's control plane, carried as ps::SimpleApp
// bodies between the nodes and the controller in the scheduler:
//
//   JOIN    node -> controller: "I take part": role, rank, the UDP address
//           the node will use, and (workers, sampling mode) the keys it
//           counted and the largest gradient magnitude it saw.
//   SCALE   worker -> controller, at its first push, after a JOIN sent at
//           its first pull (a hot-set file, no sampling): the largest
//           gradient magnitude of that push, which the JOIN could not hold.
//   INSTALL controller -> node (the response to JOIN): the hot set with its
//           placement, the epoch at which the hot path starts and the job's
//           UPDATE key, or the reason the job stays on the plain parameter
//           server.
//   REPAIR  worker -> servers: published hot values a replica lacks.
//   REPAIR_PACKETS worker -> one server: UPDATE packets of one of its
//           streams that a replica lost, answered with the packets.
//   SWITCH_DOWN node -> controller, then controller -> every node: the
//           switch stopped answering; the hot keys go through the servers
//           (fallback) until the controller resumes the hot path.
//   FALLBACK_PUSH worker -> each server: one epoch's hot values of the keys
//           that server owns, summed there as the switch would have.
//   RESUME_QUERY controller -> workers: the switch is back; the answer is
//           the worker's next epoch, and the worker holds its pushes until the
//           RESUME comes.
//   RESUME  controller -> every node: the hot path runs again from
//           `first_epoch`, under a new job id.
//   VALUES  server -> workers (a REPAIR body asks): a worker's own values of
//           some keys in an epoch, which it still keeps; the answer is a
//           FALLBACK_PUSH. A server sums saturated keys exactly with them.
//   WRITTEN_KEYS worker -> each server, with every epoch it pushes through
//           the switch: which of the server's hot keys its hot push carried,
//           so that the server reads only the cells some worker wrote.
//
// Bodies are written with wire/coding.h (little-endian fixed-width fields,
// varints); decoding checks every length and fails on a short or malformed
// body.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hot/hot_set.h"
#include "hotpath/messages/hot_packets.h"
#include "hotpath/messages/update_auth.h"
#include "ps/range.h"
#include "wire/switch_job.h"

namespace libra::hotpath {

// A key the worker pushed during the sampling phase, with its value count.
struct KeyCount {
  libra::hot::Key key = 0;
  uint32_t value_len = 1;
  uint64_t updates = 0;
  uint32_t server = 0;  // the server rank the worker's slicer sends it to
};

struct JoinRequest {
  enum class Role : uint8_t { kWorker = 1, kServer = 2 };
  Role role = Role::kWorker;
  uint32_t rank = 0;
  libra::UdpEndpoint address;
  float max_abs_value = 0;  // largest |value| pushed (workers)
  uint32_t epoch = 0;       // a worker's first hot push (sent before it while sampling)
  // A worker's median epoch while sampling (plain), in seconds; 0: unknown.
  float plain_epoch_seconds = 0;
  // What a worker pushed while it counted, over all the keys it counted
  // (also those beyond `counts`): key-value pairs, and values. With
  // plain_epoch_seconds, what the controller needs to rule out every hot
  // set before it reads a count (cost_model.h, NoSetCanPay).
  uint64_t counted_pairs = 0;
  uint64_t counted_values = 0;
  // A worker that joined at its first pull, before it had a value: its
  // largest |value| comes in a SCALE at its first push, and the controller
  // waits for one before it picks the fixed-point scale.
  bool scale_follows = false;
  // Ascending by key, each key once (Encode throws otherwise; DecodeJoin
  // gives nothing else).
  std::vector<KeyCount> counts;
};

struct Install {
  bool enabled = false;
  std::string reason;  // why the job stays plain when !enabled
  uint32_t job_id = 0;
  uint32_t first_epoch = 0;
  uint32_t num_workers = 0;
  int scale_bits = 0;
  std::shared_ptr<const libra::hot::HotSet> hot_set;
  // The server rank that owns each hot key (as the workers' slicer routes
  // it); empty means the default key ranges.
  std::vector<uint32_t> owners;
  // The secret that signs UPDATEs (update_auth.h): drawn by the controller
  // for each job, sent to the servers and workers only (never the switch),
  // and not kept in an INSTALL file.
  UpdateKey update_key;
};

// SCALE worker -> controller (an early JOIN's follow-up, see above).
struct ScaleReport {
  uint32_t rank = 0;
  float max_abs_value = 0;  // largest |value| of the worker's first push
};

// DONE worker -> controller: the worker will push no more (its path
// drains, at ps::Finalize or when its KVWorker goes); `next_epoch` is the
// first epoch it has not pushed. The controller forwards it to every worker.
// Every epoch needs every worker's FIN, so a worker that pushes `next_epoch`
// or later says so with PUSHED_PAST (its own rank, and the epoch after the
// one it pushed), and the controller sends the done worker PAD (its rank,
// the epoch to pad up to, not included): it pushes empty epochs, which add
// nothing, as a worker that has ended adds nothing to PS-lite's sums. Done
// workers wait for that in their drain until ALL_DONE (no body), sent once
// every worker is done (docs/hotpath.md, "Epochs"). A DONE before the worker
// joined answers every JOIN with plain: the job goes on as PS-lite runs it.
struct WorkerDone {
  uint32_t rank = 0;
  uint32_t next_epoch = 0;
};

// REPAIR worker -> servers: the values of these hot keys as of `epoch` (a
// lost REPLICA); each server answers with the keys it owns, as of the newest
// epoch it has published, once that is `epoch` or later.
struct Repair {
  uint32_t epoch = 0;
  std::vector<libra::hot::Key> keys;
  std::vector<float> vals;  // the answer: key after key, hot-set lengths
};

// REPAIR_PACKETS, to one server: a worker's replica lost REPLICA packets of
// that server's stream of `epoch`: the packet numbers in `seqs`, and, when
// the stream's LAST did not come, every number from `tail_from` on. The
// server answers with those UPDATE packets as it sent them (signed, as the
// switch would have replicated them), which the worker takes as REPLICAs:
// a few packets over ZeroMQ instead of every value the server owns. An
// answer without packets: the server no longer keeps that epoch's stream.
struct PacketRepair {
  uint32_t epoch = 0;
  std::vector<uint32_t> seqs;
  uint32_t tail_from = kNoStreamTail;
  std::vector<std::string> packets;  // the answer: each one UPDATE's bytes
};

// SWITCH_DOWN: who found the switch dead, and at which of its epochs.
struct SwitchDown {
  uint32_t generation = 0;  // the hot path's incarnation (0, then one per RESUME)
  uint32_t epoch = 0;       // the first epoch the reporter could not get through
  std::string reason;
};

// FALLBACK_PUSH: worker `worker`'s hot values of `epoch` for the keys the
// receiving server owns (none is a valid push: the server counts workers).
struct FallbackPush {
  // In an answer to VALUES: the worker no longer keeps that epoch.
  static constexpr uint32_t kNotRetained = 0xffffffffu;
  uint32_t epoch = 0;
  uint32_t worker = 0;
  std::vector<libra::hot::Key> keys;  // owned by the receiver, each once
  std::vector<float> vals;            // key after key, hot-set lengths
};

// WRITTEN_KEYS: worker `worker` pushed, in `epoch`, the receiving server's
// hot keys that `key_set` names (written_keys.h: EncodeKeySet, positions
// among the server's owned keys, ascending by key), and its values of them
// have the term `sum_term` of the check of the switch's sums (sum_check.h).
struct WrittenKeys {
  uint32_t epoch = 0;
  uint32_t worker = 0;
  std::vector<uint8_t> key_set;
  uint64_t sum_term = 0;
};

// RESUME (and the answer to RESUME_QUERY, which only fills `first_epoch`
// with the worker's next epoch and `worker` with its rank: a process that is
// several workers answers once per worker, all from the same node id).
struct Resume {
  uint32_t generation = 0;
  uint32_t job_id = 0;       // the switch job of this incarnation
  uint32_t first_epoch = 0;  // the first epoch on the switch again
  uint32_t worker = 0;       // the answering worker's rank (RESUME_QUERY)
};

// The server that owns each hot key of `hot_set` (hot-set order), the one
// rule the controller, the servers and the workers share: the controller's
// `owners` when it sent them (the workers' slicer routed the sampled keys),
// else the server whose key range holds the key, as it would own it cold.
std::vector<uint32_t> HotKeyOwners(const libra::hot::HotSet& hot_set,
                                   const std::vector<uint32_t>& owners,
                                   const std::vector<ps::Range>& server_ranges);

std::string Encode(const JoinRequest& join);
std::optional<JoinRequest> DecodeJoin(const std::string& body);
// The JOIN's fields before its counts, which it leaves empty: the
// controller reads the counts only when it needs them (a whole JOIN's are
// ~10 bytes a key, up to the switch's cells). DecodeJoin of the same body
// may still find its counts malformed.
std::optional<JoinRequest> DecodeJoinHeader(const std::string& body);
std::string Encode(const ScaleReport& scale);
std::optional<ScaleReport> DecodeScale(const std::string& body);
std::string Encode(const WorkerDone& done);
std::optional<WorkerDone> DecodeWorkerDone(const std::string& body);
std::string Encode(const Install& install);
std::optional<Install> DecodeInstall(const std::string& body);
std::string Encode(const Repair& repair);
std::optional<Repair> DecodeRepair(const std::string& body);
// An INSTALL kept in a file (LIBRA_SAVE_INSTALL / LIBRA_INSTALL_FILE):
// written to a temporary file and renamed, so a reader never sees half of
// one; nullopt when the file is missing or not an INSTALL. The file holds
// no key (all zero): a job resumed from it draws a new one.
bool WriteInstallFile(const std::string& path, const Install& install);
std::optional<Install> ReadInstallFile(const std::string& path);

std::string Encode(const SwitchDown& down);
std::optional<SwitchDown> DecodeSwitchDown(const std::string& body);
std::string Encode(const PacketRepair& repair);
std::optional<PacketRepair> DecodePacketRepair(const std::string& body);
std::string Encode(const FallbackPush& push);
std::optional<FallbackPush> DecodeFallbackPush(const std::string& body);
std::string Encode(const WrittenKeys& keys);
std::optional<WrittenKeys> DecodeWrittenKeys(const std::string& body);
std::string Encode(const Resume& resume);
std::optional<Resume> DecodeResume(const std::string& body);

}  // namespace libra::hotpath
