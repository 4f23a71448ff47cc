#include "train/synthetic_data.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "common/temp_dir.h"
#include "data/dataset.h"
#include "data/feature_hash.h"
#include "data/text_parsers.h"
#include "train/alias_table.h"

namespace libra::train {
namespace {

using testing::TempDir;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

SyntheticOptions Small(SyntheticFormat format = SyntheticFormat::kLibsvm) {
  return {.rows = 40000, .keys = 20000, .fields = 8, .skew = 0.85, .seed = 7, .format = format};
}

TEST(AliasTableTest, DrawsInProportionToWeights) {
  AliasTable table({1, 0, 3, 4});
  std::vector<int> counts(4);
  uint64_t state = 0;
  for (int i = 0; i < 80000; ++i) ++counts[table.Sample(Mix64(++state))];
  EXPECT_EQ(counts[1], 0);
  EXPECT_NEAR(counts[0] / 80000.0, 0.125, 0.01);
  EXPECT_NEAR(counts[2] / 80000.0, 0.375, 0.01);
  EXPECT_NEAR(counts[3] / 80000.0, 0.5, 0.01);
  EXPECT_THROW(AliasTable({0, 0}), std::invalid_argument);
}

TEST(SyntheticDataTest, SameSeedSameBytesWhateverTheThreadCount) {
  TempDir dir;
  SyntheticWorkload workload(Small());
  workload.Write(dir.File("one"), 1);
  workload.Write(dir.File("three"), 3);
  SyntheticWorkload again(Small());
  again.Write(dir.File("again"), 2);
  const std::string one = Slurp(dir.File("one"));
  EXPECT_FALSE(one.empty());
  EXPECT_EQ(one, Slurp(dir.File("three")));
  EXPECT_EQ(one, Slurp(dir.File("again")));

  SyntheticOptions other = Small();
  other.seed = 8;
  SyntheticWorkload(other).Write(dir.File("other"), 1);
  EXPECT_NE(one, Slurp(dir.File("other")));
}

TEST(SyntheticDataTest, LibsvmOutputReadsBackWithOneKeyPerField) {
  TempDir dir;
  SyntheticWorkload workload(Small());
  workload.Write(dir.File("d.svm"));
  ReadStats stats;
  Dataset d = ReadDataset(dir.File("d.svm"), {.use_cache = false}, &stats);
  ASSERT_EQ(d.rows(), 40000u);
  EXPECT_EQ(stats.bad_lines, 0u);
  EXPECT_EQ(d.nonzeros(), 40000u * 8);
  for (size_t i = 0; i < d.nonzeros(); ++i) {
    const uint64_t field = (d.keys[i] - 1) / workload.keys_per_field();
    ASSERT_EQ(field, (i % 8)) << "feature " << i;
  }
  const double positives = std::count(d.labels.begin(), d.labels.end(), 1.0f);
  EXPECT_GT(positives / d.rows(), 0.15);  // hidden bias -1 plus noise: CTR-like, not degenerate
  EXPECT_LT(positives / d.rows(), 0.5);
}

TEST(SyntheticDataTest, CriteoOutputParsesAsCriteo) {
  TempDir dir;
  SyntheticWorkload(Small(SyntheticFormat::kCriteo)).Write(dir.File("d.tsv"));
  EXPECT_EQ(DetectFormat(dir.File("d.tsv")), DataFormat::kCriteo);
  ReadStats stats;
  Dataset d = ReadDataset(dir.File("d.tsv"), {.use_cache = false}, &stats);
  EXPECT_EQ(d.rows(), 40000u);
  EXPECT_EQ(stats.bad_lines, 0u);
  EXPECT_EQ(d.num_fields, kCriteoFields);
  size_t categorical = 0;
  for (uint32_t f : d.fields) categorical += f >= kCriteoIntegerFields;
  EXPECT_EQ(categorical, 40000u * 8);  // fields 9..26 are left empty
}

TEST(SyntheticDataTest, MeasuredTopKeyShareMatchesTheZipfCurve) {
  TempDir dir;
  SyntheticWorkload workload(Small());
  workload.Write(dir.File("d.svm"));
  Dataset d = ReadDataset(dir.File("d.svm"), {.use_cache = false});
  std::unordered_map<FeatureKey, uint64_t> counts;
  for (FeatureKey k : d.keys) ++counts[k];
  std::vector<uint64_t> sorted;
  for (const auto& [key, n] : counts) sorted.push_back(n);
  std::sort(sorted.rbegin(), sorted.rend());
  for (uint64_t top : {200u, 1000u, 4000u}) {
    uint64_t head = 0;
    for (uint64_t i = 0; i < top; ++i) head += sorted[i];
    EXPECT_NEAR(static_cast<double>(head) / d.nonzeros(), workload.ExpectedTopKeyShare(top), 0.03)
        << "top " << top;
  }
}

TEST(SyntheticDataTest, DefaultSkewGivesTopThirtyThousandKeysAboutHalfTheUpdates) {
  SyntheticOptions defaults;
  defaults.rows = 1;
  const double share = SyntheticWorkload(defaults).ExpectedTopKeyShare(30000);
  EXPECT_GT(share, 0.45);
  EXPECT_LT(share, 0.55);
  // More skew, more coverage.
  defaults.skew = 1.1;
  EXPECT_GT(SyntheticWorkload(defaults).ExpectedTopKeyShare(30000), share + 0.2);
}

TEST(SyntheticDataTest, RejectsOptionsOutOfRange) {
  EXPECT_THROW(SyntheticWorkload({.fields = 0}), std::invalid_argument);
  EXPECT_THROW(SyntheticWorkload({.keys = 3, .fields = 4}), std::invalid_argument);
  EXPECT_THROW(SyntheticWorkload({.skew = -1}), std::invalid_argument);
  EXPECT_THROW(SyntheticWorkload({.fields = 27, .format = SyntheticFormat::kCriteo}),
               std::invalid_argument);
  TempDir dir;
  EXPECT_THROW(SyntheticWorkload(Small()).Write(dir.File("no/such/dir/x")), std::runtime_error);
}

}  // namespace
}  // namespace libra::train
