// A server's checkpoint of its shard: every key it holds with its values and
// optimizer state, and the BSP iteration the shard is at. One file per server
// rank and iteration in a checkpoint directory:
//
//   DIR/server-<rank>-iter-<iteration, 12 digits>.ckpt
//
// Written atomically: the bytes go to a temporary file in DIR (a name no
// listing matches), which is fsynced and then renamed over the final name,
// and DIR is fsynced; a crash at any point leaves either no new file or a
// complete one, and the older checkpoints untouched. A server keeps its two
// newest files, so that after a crash between two servers' writes there is
// still an iteration every server has (NewestCommonIteration).
//
// File layout (little-endian, as written by the host; all fields fixed size):
//   magic "LIBRACK1", u32 version (1), u32 server rank, u32 value length,
//   u32 optimizer state floats per value, u32 optimizer kind, u32 reserved,
//   u64 job signature (a hash of the settings that fix the iteration order
//   and the parameter layout), u64 iteration, u64 key count,
//   keys (u64 each, ascending), entries (value length x (1 + state) floats
//   per key, in key order), u64 checksum (FNV-1a of every byte before it).
// A damaged, truncated or foreign file is refused with a CheckpointError
// naming it.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace libra::train {

class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ShardCheckpoint {
  uint32_t server_rank = 0;
  uint32_t value_length = 0;
  uint32_t state_per_value = 0;
  uint32_t optimizer_kind = 0;  // OptimizerKind as an integer
  uint64_t job_signature = 0;
  uint64_t iteration = 0;      // BSP iterations applied, counted from the job's start
  std::vector<uint64_t> keys;  // ascending
  std::vector<float> entries;  // per key: values, then optimizer state
  uint32_t entry_length() const { return value_length * (1 + state_per_value); }
};

// "server-<rank>-iter-<iteration>.ckpt" (iteration zero-padded to 12 digits).
std::string CheckpointFileName(uint32_t server_rank, uint64_t iteration);

// Writes `checkpoint` atomically into `dir` (created if missing) and returns
// the file's path. Throws CheckpointError on any I/O failure (the temporary
// file is removed; the previous checkpoints are not touched).
std::string WriteCheckpoint(const std::string& dir, const ShardCheckpoint& checkpoint);

// Reads and checks a checkpoint file. Throws CheckpointError naming `path`
// for a missing, truncated, damaged (checksum) or foreign file.
ShardCheckpoint ReadCheckpoint(const std::string& path);

// The iterations of server `rank`'s complete checkpoints in `dir`, ascending
// (an absent directory has none). Temporary files are not listed.
std::vector<uint64_t> ListCheckpoints(const std::string& dir, uint32_t server_rank);

// Removes all but the `keep` newest checkpoints of server `rank` in `dir`,
// and that server's temporary files left by an interrupted write.
void PruneCheckpoints(const std::string& dir, uint32_t server_rank, size_t keep);

// The newest iteration that appears in every server's list; nullopt if none
// does (or there are no servers).
std::optional<uint64_t> NewestCommonIteration(const std::vector<std::vector<uint64_t>>& per_server);

// A 64-bit hash of `text` (FNV-1a), for job signatures.
uint64_t HashText(const std::string& text);

}  // namespace libra::train
