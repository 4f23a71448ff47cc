#include <charconv>
#include <cmath>

#include "data/text_parsers.h"

namespace libra::train {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t'; }

// Labels are written as 1, +1, -1, 0, sometimes 1.0 or -1.000.
bool ParseBinaryLabel(std::string_view text, float* label) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return false;
  if (value == 1.0) {
    *label = 1.0f;
  } else if (value == 0.0 || value == -1.0) {
    *label = 0.0f;
  } else {
    return false;
  }
  return true;
}

}  // namespace

LineResult ParseLibsvmLine(std::string_view line, Dataset& out, std::string* error) {
  if (size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
  size_t pos = 0;
  auto next_token = [&]() -> std::string_view {
    while (pos < line.size() && IsSpace(line[pos])) ++pos;
    size_t start = pos;
    while (pos < line.size() && !IsSpace(line[pos])) ++pos;
    return line.substr(start, pos - start);
  };

  std::string_view label_text = next_token();
  if (label_text.empty()) return LineResult::kBlank;
  float label = 0;
  if (!ParseBinaryLabel(label_text, &label)) {
    *error = "label " + Quoted(label_text) + " is not 0/1 or -1/+1";
    return LineResult::kBad;
  }
  for (std::string_view token = next_token(); !token.empty(); token = next_token()) {
    size_t colon = token.find(':');
    if (colon == std::string_view::npos) {
      out.AbandonRow();
      *error = "feature " + Quoted(token) + " is not idx:val";
      return LineResult::kBad;
    }
    if (token.substr(0, colon) == "qid") continue;  // ranking data; irrelevant here
    uint64_t index = 0;
    float value = 0;
    const char* index_end = token.data() + colon;
    auto parsed_index = std::from_chars(token.data(), index_end, index);
    auto parsed_value = std::from_chars(index_end + 1, token.data() + token.size(), value);
    if (parsed_index.ec != std::errc() || parsed_index.ptr != index_end || colon == 0) {
      out.AbandonRow();
      *error = "feature index in " + Quoted(token) + " is not a non-negative integer";
      return LineResult::kBad;
    }
    if (parsed_value.ec != std::errc() || parsed_value.ptr != token.data() + token.size()) {
      out.AbandonRow();
      *error = "feature value in " + Quoted(token) + " is not a number";
      return LineResult::kBad;
    }
    // from_chars accepts "nan", "inf" and "infinity". One such value makes
    // every prediction and gradient it touches non-finite, and the model with
    // them, so it is as bad as text that is no number at all.
    if (!std::isfinite(value)) {
      out.AbandonRow();
      *error = "feature value in " + Quoted(token) + " is not finite";
      return LineResult::kBad;
    }
    out.AddFeature(index, value, 0);
  }
  out.EndRow(label);
  return LineResult::kRow;
}

}  // namespace libra::train
