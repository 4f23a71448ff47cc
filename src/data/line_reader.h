// Reads a text file line by line in large chunks, handing out views into its
// buffer, so that parsing a gigabyte costs no per-line allocation.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace libra::train {

// The longest line a reader hands out. The longest real row is far shorter
// (a Criteo line is under 1 KiB, a dense libsvm row of 100k features ~2 MiB);
// without a bound, a file with no newline (/dev/zero, a binary file given by
// mistake) grows the buffer until the allocation fails.
inline constexpr size_t kMaxLineBytes = size_t{16} << 20;  // 16 MiB

class LineReader {
 public:
  // Throws DataError naming the file if it cannot be opened.
  explicit LineReader(const std::string& path, size_t chunk_bytes = 8 << 20);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next line without its "\n" (or "\r\n"); the view lives until the next
  // call. False at the end of the file. Throws DataError("file:N: line too
  // long ...") for a line of more than kMaxLineBytes bytes (a bad line that
  // cannot be skipped: its end may never come).
  bool Next(std::string_view* line);
  // 1-based number of the line last returned.
  uint64_t line_number() const { return line_number_; }

 private:
  bool Refill();
  [[noreturn]] void ThrowTooLong() const;

  std::string path_;
  std::FILE* file_ = nullptr;
  std::vector<char> buffer_;
  size_t begin_ = 0, end_ = 0;  // unread bytes are buffer_[begin_, end_)
  bool eof_ = false;
  uint64_t line_number_ = 0;
};

}  // namespace libra::train
