#include "data/line_reader.h"

#include <cerrno>
#include <cstring>

#include "data/dataset.h"

namespace libra::train {

LineReader::LineReader(const std::string& path, size_t chunk_bytes)
    : path_(path), buffer_(chunk_bytes) {
  file_ = std::fopen(path.c_str(), "rb");
  if (file_ == nullptr) {
    throw DataError(path + ": cannot open: " + std::strerror(errno));
  }
}

LineReader::~LineReader() {
  if (file_ != nullptr) std::fclose(file_);
}

bool LineReader::Refill() {
  if (eof_) return false;
  // Move the partial line to the front; grow if a single line fills the buffer.
  const size_t kept = end_ - begin_;
  if (begin_ > 0) std::memmove(buffer_.data(), buffer_.data() + begin_, kept);
  begin_ = 0;
  end_ = kept;
  if (end_ == buffer_.size()) buffer_.resize(buffer_.size() * 2);
  const size_t got = std::fread(buffer_.data() + end_, 1, buffer_.size() - end_, file_);
  if (got == 0) {
    if (std::ferror(file_)) throw DataError(path_ + ": read error: " + std::strerror(errno));
    eof_ = true;
    return false;
  }
  end_ += got;
  return true;
}

void LineReader::ThrowTooLong() const {
  throw DataError(path_ + ":" + std::to_string(line_number_ + 1) + ": line too long (more than " +
                  std::to_string(kMaxLineBytes) + " bytes)");
}

bool LineReader::Next(std::string_view* line) {
  for (;;) {
    const char* start = buffer_.data() + begin_;
    const void* newline = std::memchr(start, '\n', end_ - begin_);
    if (newline != nullptr) {
      const char* stop = static_cast<const char*>(newline);
      size_t length = stop - start;
      begin_ += length + 1;
      if (length > 0 && start[length - 1] == '\r') --length;
      if (length > kMaxLineBytes) ThrowTooLong();
      *line = std::string_view(start, length);
      ++line_number_;
      return true;
    }
    // No newline in what is buffered: a partial line already past the limit
    // (and its "\r") is too long, whatever follows.
    if (end_ - begin_ > kMaxLineBytes + 1) ThrowTooLong();
    if (!Refill()) {
      if (begin_ == end_) return false;
      // Last line without a trailing newline.
      size_t length = end_ - begin_;
      const char* last = buffer_.data() + begin_;
      begin_ = end_;
      if (length > 0 && last[length - 1] == '\r') --length;
      if (length > kMaxLineBytes) ThrowTooLong();
      *line = std::string_view(last, length);
      ++line_number_;
      return true;
    }
  }
}

}  // namespace libra::train
