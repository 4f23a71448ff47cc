#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "hot/hot_set.h"
#include "hot/placement.h"

namespace libra::hot {
namespace {

using ::testing::HasSubstr;

class HotSetFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ =
        std::filesystem::temp_directory_path() / ("libra-hotset-test-" + std::to_string(getpid()));
    std::filesystem::create_directories(directory_);
    path_ = (directory_ / "job.hotset").string();
  }
  void TearDown() override { std::filesystem::remove_all(directory_); }

  static HotSet Sample() {
    std::vector<HotKey> keys;
    for (uint64_t k = 0; k < 300; ++k)
      keys.push_back({k * 7919 + 1, uint32_t(1 + k % 4), 1000 - k});
    keys.push_back({~Key{0}, 2, 3});  // the largest key survives too
    return PlaceHotSet(keys, SwitchLayout{8, 128, 2}, HeatPlacement());
  }

  std::vector<char> Bytes() const {
    std::ifstream in(path_, std::ios::binary);
    return std::vector<char>((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  }
  void Overwrite(const std::vector<char>& bytes) const {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  std::string ReadError() const {
    try {
      ReadHotSetFile(path_);
    } catch (const HotSetFileError& error) {
      return error.what();
    }
    return "no error";
  }

  std::filesystem::path directory_;
  std::string path_;
};

TEST_F(HotSetFileTest, RoundTripsKeysFrequenciesAndPlacement) {
  const HotSet written = Sample();
  WriteHotSetFile(written, path_);
  const HotSet read = ReadHotSetFile(path_);
  EXPECT_EQ(read.placement(), PlacementKind::kHeat);
  EXPECT_EQ(read.layout().num_arrays, 8u);
  EXPECT_EQ(read.layout().cells_per_array, 128u);
  EXPECT_EQ(read.layout().num_banks, 2u);
  ASSERT_EQ(read.size(), written.size());
  ASSERT_EQ(read.num_values(), written.num_values());
  for (uint32_t k = 0; k < read.size(); ++k) {
    EXPECT_EQ(read.keys()[k].key, written.keys()[k].key);
    EXPECT_EQ(read.keys()[k].value_len, written.keys()[k].value_len);
    EXPECT_EQ(read.keys()[k].frequency, written.keys()[k].frequency);
    EXPECT_EQ(read.Find(written.keys()[k].key), k);
  }
  for (size_t v = 0; v < read.num_values(); ++v) EXPECT_EQ(read.cells()[v], written.cells()[v]);
}

TEST_F(HotSetFileTest, RoundTripsAnEmptySet) {
  WriteHotSetFile(HotSet(SwitchLayout{}, PlacementKind::kHash, {}, {}), path_);
  const HotSet read = ReadHotSetFile(path_);
  EXPECT_EQ(read.size(), 0u);
  EXPECT_EQ(read.placement(), PlacementKind::kHash);
}

TEST_F(HotSetFileTest, RejectsAFlippedByteWithAChecksumError) {
  WriteHotSetFile(Sample(), path_);
  std::vector<char> bytes = Bytes();
  bytes[bytes.size() / 2] ^= 0x10;
  Overwrite(bytes);
  EXPECT_THAT(ReadError(), HasSubstr(path_));
  EXPECT_THAT(ReadError(), HasSubstr("checksum mismatch"));
}

TEST_F(HotSetFileTest, RejectsATruncatedFile) {
  WriteHotSetFile(Sample(), path_);
  std::vector<char> bytes = Bytes();
  bytes.resize(bytes.size() - 13);
  Overwrite(bytes);
  EXPECT_THAT(ReadError(), HasSubstr("does not match its header"));
  bytes.resize(20);
  Overwrite(bytes);
  EXPECT_THAT(ReadError(), HasSubstr("truncated"));
}

TEST_F(HotSetFileTest, RejectsAnotherVersionNamingIt) {
  WriteHotSetFile(Sample(), path_);
  std::vector<char> bytes = Bytes();
  bytes[8] = 2;  // version field, little-endian
  Overwrite(bytes);
  EXPECT_THAT(ReadError(), HasSubstr("unsupported version 2"));
}

TEST_F(HotSetFileTest, RejectsALayoutNoSwitchHoldsBeforeAllocatingIt) {
  // Found by fuzz_hot_set_file: a header claiming 57083 x 24640 cells (and
  // no keys) made HotSet allocate an 11 GB owner table.
  WriteHotSetFile(HotSet(SwitchLayout{8, 128, 2}, PlacementKind::kHeat, {}, {}), path_);
  std::vector<char> bytes = Bytes();
  const auto put32 = [&](size_t at, uint32_t v) {
    for (int i = 0; i < 4; ++i) bytes[at + i] = static_cast<char>(v >> (8 * i));
  };
  put32(16, 4096);   // num_arrays
  put32(20, 65535);  // cells_per_array: 2^28 cells, under HotSet's own 2^32 limit
  uint64_t hash = 0xcbf29ce484222325ull;  // re-seal: FNV-1a of all but the checksum
  for (size_t i = 0; i + 8 < bytes.size(); ++i) {
    hash = (hash ^ static_cast<uint8_t>(bytes[i])) * 0x100000001b3ull;
  }
  for (int i = 0; i < 8; ++i) bytes[bytes.size() - 8 + i] = static_cast<char>(hash >> (8 * i));
  Overwrite(bytes);
  EXPECT_THAT(ReadError(), HasSubstr("larger than any switch"));
}

TEST_F(HotSetFileTest, RejectsOtherFilesAndMissingOnes) {
  Overwrite({'h', 'e', 'l', 'l', 'o', '\n'});
  EXPECT_THAT(ReadError(), HasSubstr("not a Libra hot-set file"));
  std::filesystem::remove(path_);
  EXPECT_THAT(ReadError(), HasSubstr("cannot open"));
}

}  // namespace
}  // namespace libra::hot
