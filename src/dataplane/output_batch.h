// The packets one or more passes emit (ACK, READY, RESULT, REPLICA, ...),
// each with its destination. Buffers are reused between batches, so the data
// path allocates only while the batch grows to its working size.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "wire/switch_job.h"
#include "wire/wire.h"

namespace libra::dataplane {

struct OutputPacket {
  UdpEndpoint destination;
  std::uint16_t length = 0;
  std::array<std::uint8_t, wire::kMaxMessageBytes> bytes;

  std::span<const std::uint8_t> payload() const { return {bytes.data(), length}; }
};

class OutputBatch {
 public:
  OutputPacket& Append() {
    if (size_ == packets_.size()) packets_.emplace_back();
    return packets_[size_++];
  }
  // Withdraws the last packet appended (egress drop).
  void DropLast() { --size_; }
  void Clear() { size_ = 0; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  OutputPacket& operator[](std::size_t i) { return packets_[i]; }
  const OutputPacket& operator[](std::size_t i) const { return packets_[i]; }

 private:
  std::vector<OutputPacket> packets_;
  std::size_t size_ = 0;
};

}  // namespace libra::dataplane
