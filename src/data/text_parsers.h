// Line parsers for the two text formats. Each appends one row to a Dataset or
// leaves it untouched and says what is wrong with the line.
#pragma once

#include <string>
#include <string_view>

#include "data/dataset.h"

namespace libra::train {

enum class LineResult { kRow, kBlank, kBad };

// `text` in quotes for an error message, cut to its first 64 bytes: a bad
// token can be megabytes long, and the message is printed and kept.
inline std::string Quoted(std::string_view text) {
  constexpr size_t kShown = 64;
  if (text.size() <= kShown) return "'" + std::string(text) + "'";
  return "'" + std::string(text.substr(0, kShown)) + "...' (" + std::to_string(text.size()) +
         " bytes)";
}

// libsvm / svmlight: "label idx:val idx:val ... [# comment]". Labels 0/1 or
// -1/+1; the key is the index itself; every feature is in field 0.
LineResult ParseLibsvmLine(std::string_view line, Dataset& out, std::string* error);

// Criteo display-advertising TSV: label, 13 integer features, 26 categorical
// features (hex tokens), 40 tab-separated columns with empty fields allowed.
inline constexpr uint32_t kCriteoIntegerFields = 13;
inline constexpr uint32_t kCriteoCategoricalFields = 26;
inline constexpr uint32_t kCriteoFields = kCriteoIntegerFields + kCriteoCategoricalFields;

// Integer features are bucketised (exact for small values, then by the square
// of the logarithm) so that one key stands for a range of counts.
uint64_t CriteoIntegerBucket(int64_t value);

LineResult ParseCriteoLine(std::string_view line, Dataset& out, std::string* error);

}  // namespace libra::train
