// Fuzzes the decoding of a received ZeroMQ message: the input is the frames
// of one multipart message (fuzz_records.h), of which the first is the
// sender's identity, the second the Meta header (DecodeMeta) and the rest
// data frames, as ZmqTransport::RecvMsg receives them. Invariants:
//   - DecodeMeta accepts a header exactly when EncodeMeta gives back the
//     same bytes (only the three unused flag bits may differ);
//   - what decodes respects the limits the codec promises (hostnames of at
//     most 255 bytes, at most 64 data frames, known enum values);
//   - decoding into a Meta that already holds data gives the same result.
// (RecvMsg then only compares the number of data frames with the types.)
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fuzz_records.h"
#include "ps/message_codec.h"

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

bool SameMeta(const ps::Meta& a, const ps::Meta& b) {
  return ps::EncodeMeta(a) == ps::EncodeMeta(b);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto frames = libra::fuzz::SplitRecords({data, size});
  // An input of fewer than two frames is the header frame itself, so that
  // the fuzzer can also work on the header alone.
  const char* header = reinterpret_cast<const char*>(data);
  std::size_t header_size = size;
  if (frames.size() >= 2) {
    header = reinterpret_cast<const char*>(frames[1].data());
    header_size = frames[1].size();
  }

  ps::Meta meta;
  if (!ps::DecodeMeta(header, header_size, &meta)) return 0;

  const std::string again = ps::EncodeMeta(meta);
  Check(again.size() == header_size);
  for (std::size_t i = 0; i < header_size; ++i) {
    const char mask = i == 3 ? 0x1f : static_cast<char>(0xff);
    Check(((again[i] ^ header[i]) & mask) == 0);
  }
  Check(meta.data_type.size() <= 64);
  for (const ps::DataType type : meta.data_type) {
    Check(type >= ps::DataType::kChar && type <= ps::DataType::kOther);
  }
  Check(meta.control.cmd >= ps::Control::EMPTY && meta.control.cmd <= ps::Control::ABORT);
  for (const ps::Node& node : meta.control.node) {
    Check(node.hostname.size() <= 255);
    Check(node.role >= ps::Node::SERVER && node.role <= ps::Node::SCHEDULER);
  }

  // A Meta reused for the next message (the van keeps one per loop).
  ps::Meta reused;
  reused.body = "stale body";
  reused.data_type.assign(3, ps::DataType::kFloat);
  reused.control.node.resize(2);
  reused.control.node[0].hostname = "stale";
  Check(ps::DecodeMeta(header, header_size, &reused));
  Check(SameMeta(meta, reused));
  return 0;
}
