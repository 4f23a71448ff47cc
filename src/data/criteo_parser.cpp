#include <charconv>
#include <cmath>
#include <cstring>

#include "data/feature_hash.h"
#include "data/text_parsers.h"

namespace libra::train {

uint64_t CriteoIntegerBucket(int64_t value) {
  if (value <= 2) return static_cast<uint64_t>(value);
  // Tagged so that large-value buckets never collide with the exact small ones.
  const double log_value = std::log(static_cast<double>(value));
  return (uint64_t{1} << 62) | static_cast<uint64_t>(log_value * log_value);
}

LineResult ParseCriteoLine(std::string_view line, Dataset& out, std::string* error) {
  if (line.empty()) return LineResult::kBlank;
  const char* const end = line.data() + line.size();
  const char* cursor = line.data();
  uint32_t column = 0;
  float label = 0;
  while (true) {
    const char* tab = static_cast<const char*>(std::memchr(cursor, '\t', end - cursor));
    const char* stop = tab != nullptr ? tab : end;
    std::string_view cell(cursor, stop - cursor);
    if (column == 0) {
      if (cell == "1") {
        label = 1.0f;
      } else if (cell == "0") {
        label = 0.0f;
      } else {
        *error = "label " + Quoted(cell) + " is not 0 or 1";
        return LineResult::kBad;
      }
    } else if (column > kCriteoFields) {
      // Counted below; keep scanning to report the real number of columns.
    } else if (!cell.empty()) {
      const uint32_t field = column - 1;
      if (field < kCriteoIntegerFields) {
        int64_t value = 0;
        auto [ptr, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), value);
        if (ec != std::errc() || ptr != cell.data() + cell.size()) {
          out.AbandonRow();
          *error = "integer feature " + std::to_string(field + 1) + " " + Quoted(cell) +
                   " is not an integer";
          return LineResult::kBad;
        }
        out.AddFeature(FieldKey(field, CriteoIntegerBucket(value)), 1.0f, field);
      } else {
        out.AddFeature(FieldKey(field, HashBytes(cell)), 1.0f, field);
      }
    }
    ++column;
    if (tab == nullptr) break;
    cursor = tab + 1;
  }
  if (column != kCriteoFields + 1) {
    out.AbandonRow();
    *error = "expected " + std::to_string(kCriteoFields + 1) + " tab-separated columns, found " +
             std::to_string(column);
    return LineResult::kBad;
  }
  out.EndRow(label);
  return LineResult::kRow;
}

}  // namespace libra::train
