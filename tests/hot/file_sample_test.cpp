#include "hot/file_sample.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "data/dataset.h"
#include "zipf_data.h"

namespace libra::hot {
namespace {

using ::testing::HasSubstr;

constexpr Key kRowIdBase = 1'000'000'000;  // every row's first key: its row number + this

class FileSampleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = std::filesystem::temp_directory_path() /
                 ("libra-file-sample-test-" + std::to_string(getpid()));
    std::filesystem::create_directories(directory_);
  }
  void TearDown() override { std::filesystem::remove_all(directory_); }

  std::string Path(const std::string& name) const { return (directory_ / name).string(); }

  // 40,000 libsvm rows: the row number as a key, then 8 skewed features.
  std::string WriteLibsvm(const std::string& name, uint64_t rows = 40000) const {
    const testing::GeneratedRows data = testing::MakeZipfRows(rows, 8, 5000, 1.1, 21);
    const std::string path = Path(name);
    std::ofstream out(path);
    for (uint64_t r = 0; r < rows; ++r) {
      out << (r % 3 == 0 ? "1" : "0") << ' ' << kRowIdBase + r << ":1";
      for (uint64_t i = data.row_begin[r]; i < data.row_begin[r + 1]; ++i) {
        out << ' ' << (data.keys[i] % 999'983) + 1 << ":1";  // libsvm indices are small
      }
      out << '\n';
    }
    return path;
  }

  static ProfileOptions Options(double fraction) {
    ProfileOptions options;
    options.layout = SwitchLayout{32, 16, 2};
    options.batch_size = 100;
    options.workers = 4;
    options.sample_fraction = fraction;
    return options;
  }

  static FileSampleOptions SmallReads() {
    FileSampleOptions options;
    options.probe_bytes = 16 << 10;
    options.chunk_bytes = 4 << 10;
    return options;
  }

  std::filesystem::path directory_;
};

// The row number of each sample row, from its first key.
std::vector<uint64_t> RowNumbers(const EpochSample& sample) {
  std::vector<uint64_t> numbers;
  for (size_t r = 0; r + 1 < sample.row_begin.size(); ++r) {
    numbers.push_back(sample.keys[sample.row_begin[r]] - kRowIdBase);
  }
  return numbers;
}

TEST_F(FileSampleTest, ReadsWholeEpochsSpreadOverTheFileAndOnlyThose) {
  const std::string path = WriteLibsvm("data.libsvm");
  const uint64_t size = std::filesystem::file_size(path);
  const EpochSample sample = SampleDataFile(path, Options(0.1), SmallReads());

  // 100 epochs of 400 rows; the count of epochs is estimated from the head.
  ASSERT_GE(sample.epochs(), 9u);
  ASSERT_LE(sample.epochs(), 11u);
  const std::vector<uint64_t> rows = RowNumbers(sample);
  for (uint64_t e = 0; e < sample.epochs(); ++e) {
    ASSERT_EQ(sample.epoch_begin[e + 1] - sample.epoch_begin[e], 400u);
    // Consecutive rows of the file, each epoch after the one before.
    for (uint64_t r = sample.epoch_begin[e] + 1; r < sample.epoch_begin[e + 1]; ++r) {
      ASSERT_EQ(rows[r], rows[r - 1] + 1);
    }
    if (e > 0) {
      EXPECT_GT(rows[sample.epoch_begin[e]], rows[sample.epoch_begin[e] - 1]);
    }
  }
  EXPECT_LT(rows.front(), 40000u / 5);          // from the first stratum
  EXPECT_GT(rows.back(), 40000u - 40000u / 5);  // to the last

  EXPECT_EQ(sample.data_bytes, size);
  EXPECT_LE(sample.bytes_read, size / 10 * 12 / 10 + (16 << 10) + sample.epochs() * (8 << 10));
  EXPECT_FALSE(sample.data_rows_exact);
  EXPECT_NEAR(double(sample.data_rows), 40000.0, 40000.0 * 0.03);
}

TEST_F(FileSampleTest, ReadsTheWholeFileWhenSamplingEveryEpoch) {
  const std::string path = WriteLibsvm("data.libsvm", 1234);
  const EpochSample sample = SampleDataFile(path, Options(1.0), SmallReads());
  EXPECT_TRUE(sample.data_rows_exact);
  EXPECT_EQ(sample.data_rows, 1234u);
  EXPECT_EQ(sample.epochs(), 4u);  // 400 + 400 + 400 + 34 rows
  const std::vector<uint64_t> rows = RowNumbers(sample);
  ASSERT_EQ(rows.size(), 1234u);
  for (uint64_t r = 0; r < rows.size(); ++r) ASSERT_EQ(rows[r], r);
}

TEST_F(FileSampleTest, ProfilesAFileAsWellAsTheSameRowsInMemory) {
  const std::string path = WriteLibsvm("data.libsvm");
  const ProfileOptions options = Options(0.1);
  ProfileResult result = ProfileSample(SampleDataFile(path, options), options);
  const train::Dataset whole = train::ReadDataset(path);
  EvaluateCoverage(SparseRows{whole.row_begin, whole.keys}, options, result.hot_set,
                   &result.report);
  EXPECT_EQ(result.report.rows, 40000u);
  EXPECT_TRUE(result.report.rows_exact);
  EXPECT_EQ(result.report.hot_values, 512u);
  EXPECT_GE(result.report.coverage_ratio, 0.95);
  EXPECT_EQ(result.report.heat_layout_aware.total.conflicts, 0u);
}

TEST_F(FileSampleTest, ReadsCriteoTextAndTheBinaryCache) {
  const std::string tsv = Path("data.tsv");
  {
    std::ofstream out(tsv);
    for (int r = 0; r < 900; ++r) {
      out << r % 2;
      for (int i = 0; i < 13; ++i) out << '\t' << (r + i) % 7;
      for (int i = 0; i < 26; ++i)
        out << '\t' << std::hex << 0x1000 + (r * 31 + i) % 50 << std::dec;
      out << '\n';
    }
  }
  const EpochSample text = SampleDataFile(tsv, Options(1.0));
  EXPECT_EQ(text.data_rows, 900u);
  EXPECT_EQ(text.keys.size(), 900u * 39);

  // Reading the text once leaves its binary cache next to it.
  const train::Dataset whole = train::ReadDataset(tsv);
  const std::string cache = tsv + ".libracache";
  ASSERT_TRUE(std::filesystem::exists(cache));
  const EpochSample cached = SampleDataFile(cache, Options(0.5));
  EXPECT_TRUE(cached.data_rows_exact);
  EXPECT_EQ(cached.data_rows, 900u);
  EXPECT_EQ(cached.bytes_read, std::filesystem::file_size(cache));
  EXPECT_EQ(cached.epochs(), 2u);  // half of 3 epochs, rounded
}

TEST_F(FileSampleTest, BadLinesNameTheFileOrAreCountedWhenSkipped) {
  const std::string path = Path("bad.libsvm");
  {
    std::ofstream out(path);
    out << "1 3:1 5:1\n0 4:1\nnot a row\n\n1 3:1\n";
  }
  try {
    SampleDataFile(path, Options(1.0));
    FAIL() << "a bad line was accepted";
  } catch (const train::DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr(path));
    EXPECT_THAT(e.what(), HasSubstr("line at byte 16"));
  }
  FileSampleOptions skip;
  skip.skip_bad_lines = true;
  const EpochSample sample = SampleDataFile(path, Options(1.0), skip);
  EXPECT_EQ(sample.bad_lines, 1u);
  EXPECT_EQ(sample.data_rows, 3u);

  try {
    SampleDataFile(Path("missing.libsvm"), Options(0.05));
    FAIL() << "a missing file was accepted";
  } catch (const train::DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr("missing.libsvm"));
  }
  EXPECT_THROW(SampleDataFile(path, Options(0.0)), std::invalid_argument);
}

TEST_F(FileSampleTest, AnEmptyFileHasNoRows) {
  const std::string path = Path("empty.libsvm");
  std::ofstream(path).close();
  const EpochSample sample = SampleDataFile(path, Options(0.05));
  EXPECT_EQ(sample.data_rows, 0u);
  EXPECT_EQ(sample.epochs(), 0u);
  EXPECT_EQ(ProfileSample(sample, Options(0.05)).report.hot_keys, 0u);
}

}  // namespace
}  // namespace libra::hot
