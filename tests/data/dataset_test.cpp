#include "data/dataset.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "common/temp_dir.h"
#include "data/dataset_cache.h"
#include "data/feature_hash.h"
#include "data/line_reader.h"
#include "data/text_parsers.h"

namespace libra::train {
namespace {

using testing::TempDir;

std::string CriteoLine(const std::string& label, const std::string& first_int,
                       const std::string& first_cat) {
  std::string line = label + "\t" + first_int;
  for (int i = 1; i < 13; ++i) line += "\t";
  line += "\t" + first_cat;
  for (int i = 1; i < 26; ++i) line += "\t";
  return line;
}

// The DataError a read of `path` throws, or "" if it reads.
std::string ReadError(const std::string& path, const ReadOptions& options = {.use_cache = false}) {
  try {
    ReadDataset(path, options);
  } catch (const DataError& e) {
    return e.what();
  }
  return "";
}

TEST(LibsvmParserTest, ParsesLabelsAndFeatures) {
  TempDir dir;
  const auto path =
      dir.Write("a.svm", "+1 3:0.5 10:2\n-1 7:1 # comment\n\n0 1:1.5e-1\r\n1 qid:3 2:4");
  ReadStats stats;
  Dataset d = ReadDataset(path, {.use_cache = false}, &stats);
  ASSERT_EQ(d.rows(), 4u);
  EXPECT_EQ(stats.lines, 5u);
  EXPECT_EQ(stats.bad_lines, 0u);
  EXPECT_EQ(d.num_fields, 1u);
  EXPECT_EQ(d.labels, (std::vector<float>{1, 0, 0, 1}));
  EXPECT_EQ(d.row_begin, (std::vector<uint64_t>{0, 2, 3, 4, 5}));
  EXPECT_EQ(d.keys, (std::vector<FeatureKey>{3, 10, 7, 1, 2}));
  EXPECT_FLOAT_EQ(d.values[0], 0.5f);
  EXPECT_FLOAT_EQ(d.values[3], 0.15f);
  EXPECT_FLOAT_EQ(d.values[4], 4.0f);
}

TEST(DatasetTest, StatsCountTheRowsOfTheWholeFileWhateverTheShard) {
  TempDir dir;
  const auto path = dir.Write("rows.svm", "1 1:1\n0 2:1\n\n1 3:1\nbad\n0 4:1\n1 5:1\n");
  for (const bool cache : {false, true, true}) {  // text, then build and read the cache
    ReadStats stats;
    const Dataset shard = ReadDataset(
        path, {.skip_bad_lines = true, .shard = 1, .num_shards = 2, .use_cache = cache}, &stats);
    EXPECT_EQ(shard.rows(), 2u);
    EXPECT_EQ(stats.rows, 5u) << "cache " << cache;
    EXPECT_EQ(stats.bad_lines, 1u);
  }
}

TEST(LibsvmParserTest, BadLineNamesFileLineAndProblem) {
  TempDir dir;
  const auto path = dir.Write("bad.svm", "1 1:1\n2 1:1\n");
  try {
    ReadDataset(path, {.use_cache = false});
    FAIL() << "expected DataError";
  } catch (const DataError& e) {
    EXPECT_EQ(std::string(e.what()), path + ":2: label '2' is not 0/1 or -1/+1");
  }
  for (const char* line : {"1 x:1", "1 3:y", "1 3", "1 -3:1", "1 :4"}) {
    const auto p = dir.Write("one.svm", std::string(line) + "\n");
    EXPECT_THROW(ReadDataset(p, {.use_cache = false}), DataError) << line;
  }
}

TEST(LibsvmParserTest, SkipBadLinesCountsThemAndKeepsTheRest) {
  TempDir dir;
  const auto path = dir.Write("bad.svm", "1 1:1\n1 1:1 zz\n0 2:1\nnope\n");
  ReadStats stats;
  Dataset d = ReadDataset(path, {.skip_bad_lines = true, .use_cache = false}, &stats);
  EXPECT_EQ(d.rows(), 2u);
  EXPECT_EQ(d.nonzeros(), 2u);
  EXPECT_EQ(d.keys, (std::vector<FeatureKey>{1, 2}));
  EXPECT_EQ(stats.bad_lines, 2u);
  EXPECT_EQ(stats.first_bad_line, path + ":2: feature 'zz' is not idx:val");
}

// A non-finite value in a row makes every prediction that touches it NaN
// (once, a worker spun forever in Auc on one). It is a bad line, in the
// value or the label, whatever the spelling from_chars accepts.
TEST(LibsvmParserTest, NonFiniteValuesAndLabelsAreBadLines) {
  TempDir dir;
  for (const char* line : {"1 12:nan 13:1", "1 12:inf", "0 12:-inf", "1 3:1 12:infinity",
                           "1 12:NAN", "1 12:-nan", "nan 12:1", "inf 12:1", "-inf 12:1"}) {
    const auto path = dir.Write("nan.svm", "1 1:1\n" + std::string(line) + "\n0 2:1\n");
    const std::string error = ReadError(path);
    EXPECT_EQ(error.rfind(path + ":2: ", 0), 0u) << line << ": " << error;
    ReadStats stats;
    const Dataset d = ReadDataset(path, {.skip_bad_lines = true, .use_cache = false}, &stats);
    EXPECT_EQ(d.rows(), 2u) << line;
    EXPECT_EQ(stats.bad_lines, 1u) << line;
    EXPECT_EQ(d.keys, (std::vector<FeatureKey>{1, 2})) << line;
  }
  const auto inf = dir.Write("inf.svm", "1 12:inf\n");
  EXPECT_EQ(ReadError(inf), inf + ":1: feature value in '12:inf' is not finite");
}

TEST(CriteoParserTest, NonFiniteIntegersAndLabelsAreBadLines) {
  TempDir dir;
  for (const auto& line : {CriteoLine("1", "nan", "aa"), CriteoLine("1", "inf", "aa"),
                           CriteoLine("nan", "4", "aa"), CriteoLine("inf", "4", "aa")}) {
    const auto path = dir.Write("nan.tsv", CriteoLine("1", "4", "aa") + "\n" + line + "\n");
    EXPECT_THROW(ReadDataset(path, {.use_cache = false}), DataError) << line;
    ReadStats stats;
    EXPECT_EQ(ReadDataset(path, {.skip_bad_lines = true, .use_cache = false}, &stats).rows(), 1u);
    EXPECT_EQ(stats.bad_lines, 1u);
  }
}

// A file with an endless line (/dev/zero, a binary file by mistake) used to
// grow the line buffer until std::bad_alloc; a line longer than the limit is
// an error naming it.
TEST(LineReaderTest, ALineLongerThanTheLimitIsAnErrorNamingIt) {
  TempDir dir;
  const std::string long_line(kMaxLineBytes + 1, 'x');
  const auto path = dir.Write("long.svm", "1 1:1\n" + long_line + "\n0 2:1\n");
  EXPECT_EQ(ReadError(path, {.skip_bad_lines = true, .use_cache = false}),
            path + ":2: line too long (more than " + std::to_string(kMaxLineBytes) + " bytes)");
  // Exactly the limit is still a line (here a bad one: it is no libsvm row).
  const auto at_limit =
      dir.Write("limit.svm", "1 1:1\n" + std::string(kMaxLineBytes, 'x') + "\n0 2:1");
  ReadStats stats;
  EXPECT_EQ(ReadDataset(at_limit, {.skip_bad_lines = true, .use_cache = false}, &stats).rows(), 2u);
  EXPECT_EQ(stats.bad_lines, 1u);
}

TEST(LineReaderTest, AnEndlessFileStopsAtTheLimit) {
  if (!std::filesystem::exists("/dev/zero")) GTEST_SKIP() << "no /dev/zero";
  EXPECT_THROW(ReadDataset("/dev/zero", {.use_cache = false}), DataError);
}

TEST(CriteoParserTest, ParsesAllColumnsAndAllowsEmptyFields) {
  TempDir dir;
  const auto path =
      dir.Write("day.tsv", CriteoLine("1", "5", "68fd1e64") + "\n" + CriteoLine("0", "", "") +
                               "\n" + CriteoLine("0", "-1", "68fd1e64") + "\n");
  ReadStats stats;
  Dataset d = ReadDataset(path, {.use_cache = false}, &stats);
  ASSERT_EQ(d.rows(), 3u);
  EXPECT_EQ(d.num_fields, kCriteoFields);
  EXPECT_EQ(d.labels, (std::vector<float>{1, 0, 0}));
  EXPECT_EQ(d.row_begin, (std::vector<uint64_t>{0, 2, 2, 4}));
  EXPECT_EQ(d.fields, (std::vector<uint32_t>{0, 13, 0, 13}));
  EXPECT_EQ(d.keys[0], FieldKey(0, CriteoIntegerBucket(5)));
  EXPECT_EQ(d.keys[1], d.keys[3]);  // same token, same field, same key
  EXPECT_NE(d.keys[0], d.keys[2]);
}

TEST(CriteoParserTest, SameTokenInTwoFieldsGivesTwoKeys) {
  EXPECT_NE(FieldKey(13, HashBytes("abc")), FieldKey(14, HashBytes("abc")));
}

TEST(CriteoParserTest, IntegerBucketsAreMonotoneAndCoarse) {
  EXPECT_EQ(CriteoIntegerBucket(0), 0u);
  EXPECT_NE(CriteoIntegerBucket(2), CriteoIntegerBucket(3));
  EXPECT_EQ(CriteoIntegerBucket(1000), CriteoIntegerBucket(1001));
  EXPECT_NE(CriteoIntegerBucket(10), CriteoIntegerBucket(100000));
}

TEST(CriteoParserTest, RejectsWrongColumnCountAndBadIntegers) {
  TempDir dir;
  const auto short_line = dir.Write("short.tsv", "1\t2\t3\n");
  try {
    ReadDataset(short_line, {.use_cache = false});
    FAIL();
  } catch (const DataError& e) {
    EXPECT_EQ(std::string(e.what()), short_line + ":1: expected 40 tab-separated columns, found 3");
  }
  const auto bad_int = dir.Write("int.tsv", CriteoLine("1", "4x", "aa") + "\n");
  EXPECT_THROW(ReadDataset(bad_int, {.use_cache = false}), DataError);
  const auto bad_label = dir.Write("label.tsv", CriteoLine("2", "4", "aa") + "\n");
  EXPECT_THROW(ReadDataset(bad_label, {.use_cache = false}), DataError);
}

TEST(DatasetTest, ShardsPartitionTheValidRowsRoundRobin) {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 10; ++i) {
    text += std::to_string(i % 2) + " " + std::to_string(i) + ":1\n";
    if (i == 4) text += "garbage\n";  // bad lines do not shift the deal
  }
  const auto path = dir.Write("s.svm", text);
  for (bool cache : {false, true}) {
    std::vector<FeatureKey> seen;
    for (int shard = 0; shard < 3; ++shard) {
      Dataset d = ReadDataset(
          path, {.skip_bad_lines = true, .shard = shard, .num_shards = 3, .use_cache = cache});
      for (size_t r = 0; r < d.rows(); ++r) {
        EXPECT_EQ(d.keys[d.row_begin[r]] % 3, static_cast<FeatureKey>(shard));
        seen.push_back(d.keys[d.row_begin[r]]);
      }
    }
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(seen.size(), 10u);
    EXPECT_EQ(std::adjacent_find(seen.begin(), seen.end()), seen.end());
  }
  EXPECT_THROW(ReadDataset(path, {.shard = 3, .num_shards = 3}), DataError);
}

TEST(DatasetTest, CacheIsBuiltReusedAndRebuiltWhenStale) {
  TempDir dir;
  const auto path = dir.Write("c.svm", "1 1:1 2:0.5\n0 3:1\n");
  ReadStats first, second;
  Dataset a = ReadDataset(path, {}, &first);
  EXPECT_FALSE(first.from_cache);
  ASSERT_TRUE(std::filesystem::exists(CachePathFor(path)));
  Dataset b = ReadDataset(path, {}, &second);
  EXPECT_TRUE(second.from_cache);
  EXPECT_EQ(a.keys, b.keys);
  EXPECT_EQ(a.values, b.values);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.row_begin, b.row_begin);
  EXPECT_EQ(second.lines, 2u);

  // The cache file itself is a valid input.
  Dataset c = ReadDataset(CachePathFor(path));
  EXPECT_EQ(c.keys, a.keys);

  dir.Write("c.svm", "1 1:1 2:0.5\n0 3:1\n1 4:1\n");
  ReadStats third;
  Dataset d = ReadDataset(path, {}, &third);
  EXPECT_FALSE(third.from_cache);
  EXPECT_EQ(d.rows(), 3u);
}

TEST(DatasetTest, CachedBadLinesStillFailAStrictRead) {
  TempDir dir;
  const auto path = dir.Write("b.svm", "1 1:1\nbad\n");
  ReadDataset(path, {.skip_bad_lines = true});
  ReadStats stats;
  EXPECT_THROW(ReadDataset(path, {}, &stats), DataError);
  Dataset d = ReadDataset(path, {.skip_bad_lines = true}, &stats);
  EXPECT_TRUE(stats.from_cache);
  EXPECT_EQ(stats.bad_lines, 1u);
  EXPECT_EQ(d.rows(), 1u);
}

TEST(DatasetTest, CorruptCacheIsRebuiltAndRejectedWhenReadDirectly) {
  TempDir dir;
  const auto path = dir.Write("x.svm", "1 1:1\n0 2:1\n");
  ReadDataset(path);
  const auto cache = CachePathFor(path);
  std::filesystem::resize_file(cache, std::filesystem::file_size(cache) - 3);
  EXPECT_THROW(ReadDataset(cache), DataError);
  ReadStats stats;
  Dataset d = ReadDataset(path, {}, &stats);
  EXPECT_FALSE(stats.from_cache);
  EXPECT_EQ(d.rows(), 2u);
}

// Four bytes overwritten inside the arrays keep every size right, so only a
// checksum tells; version 1 trained on the damaged values with exit 0.
TEST(DatasetTest, ADamagedCacheIsRebuiltFromTheTextAndSaysWhy) {
  TempDir dir;
  const auto path = dir.Write("d.svm", "1 1:0.25 2:0.5\n0 3:1\n1 4:2 5:4\n");
  const Dataset original = ReadDataset(path);
  const auto cache = CachePathFor(path);
  const auto cache_bytes = std::filesystem::file_size(cache);
  // The 4 bytes before the checksum and the fields array are a value: damage
  // them in place (size and modification time of the text stay as they were).
  {
    std::fstream f(cache, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(cache_bytes - 8 - 5 * 4 - 4));
    f.write("\x7f\x7f\x7f\x7f", 4);
  }
  EXPECT_EQ(ReadError(cache, {}), cache + ": cache is damaged (checksum mismatch)");
  ReadStats stats;
  const Dataset rebuilt = ReadDataset(path, {}, &stats);
  EXPECT_FALSE(stats.from_cache);
  EXPECT_EQ(stats.cache_problem, cache + ": cache is damaged (checksum mismatch)");
  EXPECT_EQ(rebuilt.values, original.values);
  EXPECT_EQ(rebuilt.keys, original.keys);
  // The rebuilt cache is whole again and used next time.
  ReadStats again;
  EXPECT_EQ(ReadDataset(path, {}, &again).values, original.values);
  EXPECT_TRUE(again.from_cache);
  EXPECT_EQ(again.cache_problem, "");
}

TEST(DatasetTest, EveryDamagedByteOfACacheIsFound) {
  TempDir dir;
  const auto path = dir.Write("e.svm", "1 1:0.25 2:0.5\n0 3:1\nbad\n");
  ReadDataset(path, {.skip_bad_lines = true});
  const auto cache = CachePathFor(path);
  std::string bytes;
  {
    std::ifstream in(cache, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string damaged = bytes;
    damaged[i] = static_cast<char>(damaged[i] ^ 0x10);
    const auto copy = dir.Write("copy.libracache", damaged);
    Dataset d;
    CacheInfo info;
    EXPECT_THROW(ReadDatasetCache(copy, &d, &info), DataError) << "byte " << i;
  }
}

TEST(DatasetTest, MissingFileNamesIt) {
  try {
    ReadDataset("/nonexistent/libra.svm");
    FAIL();
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/libra.svm: cannot open"), std::string::npos);
  }
}

TEST(FeatureHashTest, Mix64IsInvertible) {
  for (uint64_t x : {0ull, 1ull, 42ull, 0xffffffffffffffffull, 0x123456789abcdefull}) {
    EXPECT_EQ(UnMix64(Mix64(x)), x);
  }
}

}  // namespace
}  // namespace libra::train
