#include "hot/file_sample.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <string_view>
#include <vector>

#include "data/dataset.h"
#include "data/text_parsers.h"

namespace libra::hot {
namespace {

using train::DataError;

// Lines of a file from any byte offset, read with pread in small chunks so
// that a sampled epoch costs about its own bytes.
class SampledLineReader {
 public:
  SampledLineReader(const std::string& path, uint64_t chunk_bytes)
      : path_(path), chunk_bytes_(std::max<uint64_t>(chunk_bytes, 1)) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw DataError(path + ": cannot open: " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd_, &st) != 0) {
      const int error = errno;
      ::close(fd_);
      throw DataError(path + ": cannot stat: " + std::strerror(error));
    }
    size_ = static_cast<uint64_t>(st.st_size);
  }
  ~SampledLineReader() { ::close(fd_); }
  SampledLineReader(const SampledLineReader&) = delete;
  SampledLineReader& operator=(const SampledLineReader&) = delete;

  uint64_t size() const { return size_; }
  uint64_t bytes_read() const { return bytes_read_; }
  // File offset just past the line last returned (or the seek point).
  uint64_t position() const { return buffer_offset_ + begin_; }

  // Moves to the first line that starts at or after `offset`.
  void SeekToLineAt(uint64_t offset) {
    Reset(offset == 0 ? 0 : offset - 1);
    if (offset == 0) return;
    std::string_view partial;  // the line holding byte offset - 1 ends there
    Next(&partial);
  }

  // The next line without its "\n" (or "\r\n"); valid until the next call.
  // False at the end of the file.
  bool Next(std::string_view* line) {
    for (;;) {
      const char* start = buffer_.data() + begin_;
      const void* newline = begin_ < end_ ? std::memchr(start, '\n', end_ - begin_) : nullptr;
      if (newline != nullptr || (eof_ && begin_ < end_)) {
        const char* stop =
            newline != nullptr ? static_cast<const char*>(newline) : buffer_.data() + end_;
        size_t length = static_cast<size_t>(stop - start);
        begin_ += length + (newline != nullptr ? 1 : 0);
        if (length > 0 && start[length - 1] == '\r') --length;
        *line = std::string_view(start, length);
        return true;
      }
      if (eof_ || !Refill()) return false;
    }
  }

 private:
  void Reset(uint64_t offset) {
    buffer_offset_ = offset;
    begin_ = end_ = 0;
    eof_ = offset >= size_;
  }

  bool Refill() {
    // Keep the partial line, at the front; grow when one line fills the buffer.
    const size_t kept = end_ - begin_;
    if (begin_ > 0) std::memmove(buffer_.data(), buffer_.data() + begin_, kept);
    buffer_offset_ += begin_;
    begin_ = 0;
    end_ = kept;
    if (buffer_.size() < end_ + chunk_bytes_) buffer_.resize(end_ + chunk_bytes_);
    const uint64_t at = buffer_offset_ + end_;
    const ssize_t got = ::pread(fd_, buffer_.data() + end_, chunk_bytes_, static_cast<off_t>(at));
    if (got < 0) throw DataError(path_ + ": read error: " + std::strerror(errno));
    bytes_read_ += static_cast<uint64_t>(got);
    end_ += static_cast<size_t>(got);
    if (got == 0 || at + static_cast<uint64_t>(got) >= size_) eof_ = true;
    return got > 0;
  }

  std::string path_;
  uint64_t chunk_bytes_;
  int fd_ = -1;
  uint64_t size_ = 0;
  uint64_t bytes_read_ = 0;
  std::vector<char> buffer_;
  uint64_t buffer_offset_ = 0;  // file offset of buffer_[0]
  size_t begin_ = 0, end_ = 0;  // unread bytes are buffer_[begin_, end_)
  bool eof_ = false;
};

// Parses the lines of one format into a Dataset, applying the bad-line policy.
class LineParser {
 public:
  LineParser(const std::string& path, train::DataFormat format, bool skip_bad_lines)
      : path_(path),
        parse_(format == train::DataFormat::kCriteo ? train::ParseCriteoLine
                                                    : train::ParseLibsvmLine),
        skip_bad_lines_(skip_bad_lines) {}

  // True if the line became a row of `rows`.
  bool Parse(std::string_view line, uint64_t offset, train::Dataset& rows) {
    switch (parse_(line, rows, &error_)) {
      case train::LineResult::kRow:
        return true;
      case train::LineResult::kBlank:
        return false;
      case train::LineResult::kBad:
        if (!skip_bad_lines_) {
          throw DataError(path_ + ": line at byte " + std::to_string(offset) + ": " + error_);
        }
        ++bad_lines_;
        return false;
    }
    return false;
  }
  uint64_t bad_lines() const { return bad_lines_; }

 private:
  std::string path_;
  train::LineResult (*parse_)(std::string_view, train::Dataset&, std::string*);
  bool skip_bad_lines_;
  std::string error_;
  uint64_t bad_lines_ = 0;
};

// Reads up to `max_rows` rows from the reader's position; returns the rows
// read and adds the bytes of their lines to `*line_bytes`.
uint64_t ReadRows(SampledLineReader& reader, LineParser& parser, uint64_t max_rows,
                  train::Dataset& rows, uint64_t* line_bytes) {
  uint64_t count = 0;
  const uint64_t start = reader.position();
  std::string_view line;
  while (count < max_rows) {
    const uint64_t offset = reader.position();
    if (!reader.Next(&line)) break;
    if (parser.Parse(line, offset, rows)) ++count;
  }
  *line_bytes += reader.position() - start;
  return count;
}

// Bytes per row of the file's head, from up to `probe_bytes` of it. Bad
// lines there are left to the sample to report, if it reads them.
double ProbeBytesPerRow(SampledLineReader& reader, const std::string& path,
                        train::DataFormat format, uint64_t probe_bytes) {
  LineParser parser(path, format, /*skip_bad_lines=*/true);
  train::Dataset scratch;
  uint64_t rows = 0;
  std::string_view line;
  reader.SeekToLineAt(0);
  while (reader.position() < probe_bytes) {
    const uint64_t offset = reader.position();
    if (!reader.Next(&line)) break;
    if (parser.Parse(line, offset, scratch)) ++rows;
    scratch = train::Dataset();
  }
  const uint64_t bytes = std::max<uint64_t>(reader.position(), 1);
  return rows == 0 ? static_cast<double>(bytes) : static_cast<double>(bytes) / rows;
}

EpochSample SampleText(const std::string& path, train::DataFormat format,
                       const ProfileOptions& options, const FileSampleOptions& file_options) {
  SampledLineReader reader(path, file_options.chunk_bytes);
  LineParser parser(path, format, file_options.skip_bad_lines);
  const uint64_t size = reader.size();
  const uint64_t rows_per_epoch = uint64_t{options.batch_size} * options.workers;

  const double bytes_per_row = ProbeBytesPerRow(reader, path, format, file_options.probe_bytes);
  const double epoch_bytes = bytes_per_row * static_cast<double>(rows_per_epoch);
  const auto epochs = std::max<uint64_t>(
      1, static_cast<uint64_t>(std::ceil(static_cast<double>(size) / epoch_bytes)));
  const uint64_t count = std::clamp<uint64_t>(
      static_cast<uint64_t>(std::llround(options.sample_fraction * static_cast<double>(epochs))), 1,
      epochs);

  train::Dataset rows;
  EpochSample sample;
  uint64_t line_bytes = 0;
  uint64_t previous_end = 0;
  bool contiguous_from_start = true;  // every line so far was read
  std::mt19937_64 random(options.seed);
  // Sampling every epoch: read the file in order to its end (the epoch count
  // was only an estimate).
  const bool whole_file = count == epochs;
  for (uint64_t i = 0; whole_file ? previous_end < size : i < count; ++i) {
    uint64_t start = previous_end;
    if (!whole_file) {
      // A random start in the i-th of `count` equal byte ranges, leaving room
      // for an epoch before the range ends, never inside the previous epoch.
      const uint64_t low = i * size / count, high = (i + 1) * size / count;
      const auto room = static_cast<uint64_t>(epoch_bytes);
      const uint64_t latest = high > low + room ? high - room : low;
      start = std::max(low + random() % (latest - low + 1), previous_end);
    }
    if (start >= size) break;
    reader.SeekToLineAt(start);
    contiguous_from_start = contiguous_from_start && reader.position() == previous_end;
    const uint64_t got = ReadRows(reader, parser, rows_per_epoch, rows, &line_bytes);
    previous_end = reader.position();
    if (got > 0) sample.epoch_begin.push_back(rows.rows());
  }
  contiguous_from_start = contiguous_from_start && previous_end >= size;

  sample.data_bytes = size;
  sample.bytes_read = reader.bytes_read();
  sample.bad_lines = parser.bad_lines();
  if (contiguous_from_start) {
    sample.data_rows = rows.rows();
    sample.data_rows_exact = true;
  } else {
    const double rows_per_byte =
        line_bytes == 0 ? 0.0 : static_cast<double>(rows.rows()) / static_cast<double>(line_bytes);
    sample.data_rows = std::max<uint64_t>(
        rows.rows(),
        static_cast<uint64_t>(std::llround(rows_per_byte * static_cast<double>(size))));
    sample.data_rows_exact = false;
  }
  sample.keys = std::move(rows.keys);
  sample.row_begin = std::move(rows.row_begin);
  return sample;
}

}  // namespace

EpochSample SampleDataFile(const std::string& path, const ProfileOptions& options,
                           const FileSampleOptions& file_options) {
  CheckProfileOptions(options);
  const auto start = std::chrono::steady_clock::now();
  const train::DataFormat format = train::DetectFormat(path);
  EpochSample sample;
  if (format == train::DataFormat::kBinaryCache) {
    train::ReadOptions read_options;
    read_options.skip_bad_lines = file_options.skip_bad_lines;
    const train::Dataset data = train::ReadDataset(path, read_options);
    sample = SampleEpochs(SparseRows{data.row_begin, data.keys}, options);
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) sample.data_bytes = static_cast<uint64_t>(st.st_size);
    sample.bytes_read = sample.data_bytes;
  } else {
    sample = SampleText(path, format, options, file_options);
  }
  sample.seconds_reading =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return sample;
}

}  // namespace libra::hot
