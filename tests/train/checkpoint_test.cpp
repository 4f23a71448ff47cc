// Server checkpoints: the file (round trip, damaged and truncated files
// refused by name, atomic replacement, pruning), the choice of the iteration
// a resumed job starts from, and a server restored from a checkpoint going
// on exactly as the one that wrote it.
#include "train/checkpoint.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "common/temp_dir.h"
#include "ps/internal/postoffice.h"
#include "train/sync_optimizer_server.h"

namespace libra::train {
namespace {

using testing::TempDir;

ShardCheckpoint Sample(uint64_t iteration = 12) {
  ShardCheckpoint c;
  c.server_rank = 1;
  c.value_length = 3;
  c.state_per_value = 1;
  c.optimizer_kind = static_cast<uint32_t>(OptimizerKind::kAdagrad);
  c.job_signature = 0xabcdef;
  c.iteration = iteration;
  c.keys = {5, 9, 0xffffffffffffffffULL};
  for (size_t i = 0; i < c.keys.size() * c.entry_length(); ++i) {
    c.entries.push_back(0.25f * static_cast<float>(i) - 1.0f);
  }
  return c;
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// The message of the CheckpointError that reading `path` throws ("" if none).
std::string ReadError(const std::string& path) {
  try {
    ReadCheckpoint(path);
  } catch (const CheckpointError& e) {
    return e.what();
  }
  return "";
}

TEST(CheckpointFileTest, RoundTripsEveryField) {
  TempDir dir;
  const ShardCheckpoint c = Sample();
  const std::string path = WriteCheckpoint(dir.File("ckpt"), c);
  EXPECT_EQ(path, dir.File("ckpt/server-1-iter-000000000012.ckpt"));
  const ShardCheckpoint back = ReadCheckpoint(path);
  EXPECT_EQ(back.server_rank, c.server_rank);
  EXPECT_EQ(back.value_length, c.value_length);
  EXPECT_EQ(back.state_per_value, c.state_per_value);
  EXPECT_EQ(back.optimizer_kind, c.optimizer_kind);
  EXPECT_EQ(back.job_signature, c.job_signature);
  EXPECT_EQ(back.iteration, c.iteration);
  EXPECT_EQ(back.keys, c.keys);
  EXPECT_EQ(back.entries, c.entries);
  // An empty shard (a server that owns no key yet) is a valid checkpoint.
  ShardCheckpoint empty = Sample(3);
  empty.keys.clear();
  empty.entries.clear();
  EXPECT_TRUE(ReadCheckpoint(WriteCheckpoint(dir.File("ckpt"), empty)).keys.empty());
}

TEST(CheckpointFileTest, ADamagedFileIsRefusedWithItsName) {
  TempDir dir;
  const std::string path = WriteCheckpoint(dir.File("d"), Sample());
  const std::string good = ReadBytes(path);
  // One flipped bit in a value: only the checksum sees it.
  std::string flipped = good;
  flipped[good.size() - 12] ^= 0x10;
  WriteBytes(path, flipped);
  std::string error = ReadError(path);
  EXPECT_NE(error.find(path), std::string::npos) << error;
  EXPECT_NE(error.find("checksum"), std::string::npos) << error;
  // Not a checkpoint at all.
  WriteBytes(path, "hello, world, this is not a checkpoint file at all......");
  error = ReadError(path);
  EXPECT_NE(error.find(path), std::string::npos) << error;
  EXPECT_NE(error.find("magic"), std::string::npos) << error;
  // A version this build does not know.
  std::string future = good;
  future[8] = 7;
  WriteBytes(path, future);
  EXPECT_NE(ReadError(path).find("version 7"), std::string::npos) << ReadError(path);
  // A key count that claims far more than the file holds.
  std::string huge = good;
  for (int i = 0; i < 8; ++i) huge[8 + 24 + 16 + i] = static_cast<char>(0x7f);
  WriteBytes(path, huge);
  EXPECT_NE(ReadError(path).find("truncated"), std::string::npos) << ReadError(path);
  // Missing.
  EXPECT_NE(ReadError(dir.File("nope.ckpt")).find("nope.ckpt"), std::string::npos);
}

TEST(CheckpointFileTest, EveryTruncationIsRefused) {
  TempDir dir;
  const std::string path = WriteCheckpoint(dir.File("t"), Sample());
  const std::string good = ReadBytes(path);
  for (size_t size = 0; size < good.size(); ++size) {
    WriteBytes(path, good.substr(0, size));
    const std::string error = ReadError(path);
    EXPECT_NE(error.find(path), std::string::npos) << "size " << size << ": " << error;
  }
  WriteBytes(path, good + "x");
  EXPECT_NE(ReadError(path), "") << "a longer file was accepted";
}

TEST(CheckpointFileTest, ReplacingIsAtomicAndLeftoversAreIgnored) {
  TempDir dir;
  const std::string d = dir.File("a");
  ShardCheckpoint first = Sample(4);
  const std::string path = WriteCheckpoint(d, first);
  // A crash in the middle of a later write leaves a temporary file: it is
  // neither listed nor does it touch the complete checkpoint.
  WriteBytes(d + "/.server-1-iter-000000000008.ckpt.tmp-999", "half a file");
  EXPECT_EQ(ListCheckpoints(d, 1), std::vector<uint64_t>{4});
  EXPECT_EQ(ReadCheckpoint(path).entries, first.entries);
  // Writing the same iteration again replaces the file whole.
  ShardCheckpoint second = first;
  second.entries[0] = 42.0f;
  EXPECT_EQ(WriteCheckpoint(d, second), path);
  EXPECT_EQ(ReadCheckpoint(path).entries[0], 42.0f);
  // Pruning keeps the newest two and removes the leftovers of this server.
  WriteCheckpoint(d, Sample(8));
  WriteCheckpoint(d, Sample(12));
  ShardCheckpoint other = Sample(4);
  other.server_rank = 0;
  WriteCheckpoint(d, other);
  PruneCheckpoints(d, 1, 2);
  EXPECT_EQ(ListCheckpoints(d, 1), (std::vector<uint64_t>{8, 12}));
  EXPECT_EQ(ListCheckpoints(d, 0), std::vector<uint64_t>{4}) << "another server's file went";
  EXPECT_FALSE(std::filesystem::exists(d + "/.server-1-iter-000000000008.ckpt.tmp-999"));
  EXPECT_TRUE(ListCheckpoints(dir.File("absent"), 0).empty());
}

TEST(CheckpointFileTest, AnUnwritableDirectoryIsACheckpointError) {
  TempDir dir;
  const std::string file = dir.Write("plain-file", "x");
  EXPECT_THROW(WriteCheckpoint(file + "/sub", Sample()), CheckpointError);
}

TEST(NewestCommonIterationTest, PicksTheNewestIterationEveryServerHas) {
  // Server 1 crashed before writing iteration 20: 10 is the one to use.
  EXPECT_EQ(NewestCommonIteration({{10, 20}, {10}, {10, 20}}), 10u);
  EXPECT_EQ(NewestCommonIteration({{10, 20}, {20, 10}}), 20u);
  EXPECT_EQ(NewestCommonIteration({{10}, {20}}), std::nullopt);
  EXPECT_EQ(NewestCommonIteration({{}, {}}), std::nullopt);
  EXPECT_EQ(NewestCommonIteration({}), std::nullopt);
}

// Pushes one round of `workers` workers' gradients for `keys`.
void PushRound(SyncOptimizerServer& server, int workers, const std::vector<ps::Key>& keys,
               float scale) {
  for (int w = 0; w < workers; ++w) {
    ps::KVMeta meta{};
    meta.push = true;
    meta.sender = ps::Postoffice::WorkerRankToID(w);
    meta.num_merged = 1;
    ps::KVPairs<float> kv;
    kv.keys = ps::SArray<ps::Key>(keys);
    std::vector<float> g(keys.size() * server.value_length());
    for (size_t i = 0; i < g.size(); ++i) g[i] = scale * static_cast<float>(i + w + 1) / 7.0f;
    kv.vals = ps::SArray<float>(g);
    server.Handle(meta, kv, [](const ps::KVMeta&, const ps::KVPairs<float>&) {});
  }
}

TEST(ServerCheckpointTest, ARestoredServerGoesOnBitForBitLikeTheOriginal) {
  for (OptimizerKind kind : {OptimizerKind::kSgd, OptimizerKind::kAdagrad, OptimizerKind::kFtrl}) {
    const ModelConfig model{
        .kind = ModelKind::kFactorizationMachine, .embedding_dim = 3, .seed = 4};
    OptimizerConfig optimizer;
    optimizer.kind = kind;
    optimizer.l2 = 0.01f;
    SyncOptimizerServer original(model, optimizer, 2);
    PushRound(original, 2, {1, 2, 3}, 1.0f);
    PushRound(original, 2, {2, 3, 4}, -0.5f);
    TempDir dir;
    ShardCheckpoint c = original.Snapshot();
    EXPECT_EQ(c.iteration, 2u);
    c.server_rank = 0;
    const ShardCheckpoint back = ReadCheckpoint(WriteCheckpoint(dir.File("c"), c));

    SyncOptimizerServer restored(model, optimizer, 2);
    restored.Restore(back);
    EXPECT_EQ(restored.iteration(), 2u);
    EXPECT_EQ(restored.Fingerprint(), original.Fingerprint());
    // The optimizer state came along: the next steps agree bit for bit
    // (Adagrad's and FTRL's steps depend on their accumulated state).
    PushRound(original, 2, {1, 3, 5}, 2.0f);
    PushRound(restored, 2, {1, 3, 5}, 2.0f);
    EXPECT_EQ(restored.Fingerprint(), original.Fingerprint()) << OptimizerKindName(kind);
    EXPECT_EQ(restored.iteration(), 3u);
    // A fresh server given only the values (fresh state) would differ.
    if (kind != OptimizerKind::kSgd) {
      SyncOptimizerServer stateless(model, optimizer, 2);
      ShardCheckpoint values_only = back;
      const uint32_t n = values_only.entry_length(), v = values_only.value_length;
      for (size_t k = 0; k < values_only.keys.size(); ++k) {
        for (uint32_t j = v; j < n; ++j)
          values_only.entries[k * n + j] = kind == OptimizerKind::kAdagrad ? 1e-6f : 0.0f;
      }
      stateless.Restore(values_only);
      PushRound(stateless, 2, {1, 3, 5}, 2.0f);
      EXPECT_NE(stateless.Fingerprint(), original.Fingerprint()) << OptimizerKindName(kind);
    }
  }
}

TEST(ServerCheckpointTest, ACheckpointOfAnotherLayoutOrAfterPushesIsRefused) {
  const ModelConfig lr{.kind = ModelKind::kLogisticRegression, .seed = 1};
  OptimizerConfig adagrad;
  SyncOptimizerServer server(lr, adagrad, 1);
  PushRound(server, 1, {1}, 1.0f);
  ShardCheckpoint c = server.Snapshot();
  // Another optimizer: the state would be misread.
  OptimizerConfig ftrl;
  ftrl.kind = OptimizerKind::kFtrl;
  SyncOptimizerServer other(lr, ftrl, 1);
  EXPECT_THROW(other.Restore(c), std::invalid_argument);
  // After a push the shard has moved on: restoring would lose it.
  EXPECT_THROW(server.Restore(c), std::logic_error);
}

}  // namespace
}  // namespace libra::train
