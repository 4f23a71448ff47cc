// Splits one fuzz input into several records (datagrams, lines of a
// request stream), so that a single input can drive a sequence of messages
// through a stateful receiver. Record format: a 2-byte little-endian length
// (only the low 10 bits count: no record needs more than 1023 bytes), then
// that many bytes; a length running past the end takes what is left.
// make_fuzz_seeds writes seeds in the same format with AppendRecord.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace libra::fuzz {

inline std::vector<std::span<const std::uint8_t>> SplitRecords(std::span<const std::uint8_t> in) {
  std::vector<std::span<const std::uint8_t>> records;
  std::size_t at = 0;
  while (at + 2 <= in.size()) {
    std::size_t length = (in[at] | (std::size_t{in[at + 1]} << 8)) & 0x3ff;
    at += 2;
    length = std::min(length, in.size() - at);
    records.push_back(in.subspan(at, length));
    at += length;
  }
  return records;
}

inline void AppendRecord(std::vector<std::uint8_t>& out, std::span<const std::uint8_t> record) {
  out.push_back(static_cast<std::uint8_t>(record.size() & 0xff));
  out.push_back(static_cast<std::uint8_t>((record.size() >> 8) & 0x03));
  out.insert(out.end(), record.begin(), record.end());
}

}  // namespace libra::fuzz
