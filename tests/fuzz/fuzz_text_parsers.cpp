// Fuzzes the two text line parsers (libsvm and Criteo TSV). Each line of the
// input goes through both, each appending to its own Dataset, as
// ReadDataset feeds them. Invariants:
//   - kRow appends exactly one row whose features are the ones the line
//     names (libsvm: a row written back as "label idx:val ..." parses to the
//     same keys and values; Criteo: at most 39 features, fields 0..38);
//   - kBad leaves the Dataset as it was and says why; kBlank leaves it as is;
//   - labels are 0 or 1, feature values finite (nan/inf make a line bad), and
//     the CSR arrays stay consistent.
#include <bit>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "data/text_parsers.h"

namespace {

using namespace libra::train;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz_text_parsers: invariant broken: %s\n", what);
    std::abort();
  }
}

void CheckConsistent(const Dataset& d) {
  Check(d.row_begin.size() == d.rows() + 1 && d.row_begin.front() == 0 &&
            d.row_begin.back() == d.nonzeros(),
        "CSR row index");
  Check(d.values.size() == d.nonzeros() && d.fields.size() == d.nonzeros(), "CSR arrays");
}

bool SameFloat(float a, float b) {
  return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b);
}

// Parses one line; returns the result after checking what it did to `d`.
LineResult ParseChecked(LineResult (*parse)(std::string_view, Dataset&, std::string*),
                        std::string_view line, Dataset& d) {
  const std::size_t rows = d.rows(), nonzeros = d.nonzeros();
  std::string error;
  const LineResult result = parse(line, d, &error);
  CheckConsistent(d);
  if (result == LineResult::kRow) {
    Check(d.rows() == rows + 1, "a row appends one row");
    Check(d.labels.back() == 0.0f || d.labels.back() == 1.0f, "label is 0 or 1");
  } else {
    Check(d.rows() == rows && d.nonzeros() == nonzeros, "a rejected line left features behind");
    Check(result == LineResult::kBlank || !error.empty(), "a bad line says why");
  }
  return result;
}

void CheckLibsvmRow(const Dataset& d) {
  const std::size_t begin = d.row_begin[d.rows() - 1];
  std::string text = d.labels.back() == 1.0f ? "+1" : "-1";
  char buffer[64];
  for (std::size_t i = begin; i < d.nonzeros(); ++i) {
    Check(d.fields[i] == 0, "libsvm field is 0");
    Check(std::isfinite(d.values[i]), "libsvm value is finite");
    text += ' ' + std::to_string(d.keys[i]) + ':';
    const auto written = std::to_chars(buffer, buffer + sizeof(buffer), d.values[i]);
    text.append(buffer, written.ptr);
  }
  Dataset again;
  std::string error;
  Check(ParseLibsvmLine(text, again, &error) == LineResult::kRow, "libsvm rewrite parses");
  Check(again.labels[0] == d.labels.back() && again.nonzeros() == d.nonzeros() - begin,
        "libsvm rewrite row");
  for (std::size_t i = 0; i < again.nonzeros(); ++i) {
    Check(again.keys[i] == d.keys[begin + i] && SameFloat(again.values[i], d.values[begin + i]),
          "libsvm rewrite features");
  }
}

void CheckCriteoRow(const Dataset& d) {
  const std::size_t begin = d.row_begin[d.rows() - 1];
  Check(d.nonzeros() - begin <= kCriteoFields, "at most one feature per Criteo field");
  std::uint32_t previous = 0;
  for (std::size_t i = begin; i < d.nonzeros(); ++i) {
    Check(d.fields[i] < kCriteoFields && d.values[i] == 1.0f, "Criteo field and value");
    Check(i == begin || d.fields[i] > previous, "Criteo fields in column order");
    previous = d.fields[i];
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  Dataset libsvm, criteo;
  std::size_t at = 0;
  while (at <= input.size()) {
    std::size_t end = input.find('\n', at);
    if (end == std::string_view::npos) end = input.size();
    const std::string_view line = input.substr(at, end - at);
    if (ParseChecked(ParseLibsvmLine, line, libsvm) == LineResult::kRow) CheckLibsvmRow(libsvm);
    if (ParseChecked(ParseCriteoLine, line, criteo) == LineResult::kRow) CheckCriteoRow(criteo);
    at = end + 1;
  }
  return 0;
}
