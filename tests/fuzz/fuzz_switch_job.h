// The switch job and the senders of the switch program's fuzz target
// (fuzz_switch_program.cpp), shared with the test that replays its corpus
// through both back ends (tests/xdp/xdp_fuzz_corpus_test.cpp), so the
// corpus means the same packets to both: an input's first byte picks the
// sender (a worker, a server or a stranger), the rest is the datagram.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <utility>

#include "dataplane/switch_backend.h"
#include "wire/wire.h"

namespace libra::fuzz {

constexpr int kSwitchWorkers = 3;
constexpr int kSwitchServers = 2;
constexpr int kSwitchSlotsPerPacket = 8;

inline UdpEndpoint SwitchSender(std::uint8_t which) {
  const int n = which % (kSwitchWorkers + kSwitchServers + 1);
  if (n < kSwitchWorkers) return {0x7f000001, static_cast<std::uint16_t>(1000 + n)};
  if (n < kSwitchWorkers + kSwitchServers) {
    return {0x7f000001, static_cast<std::uint16_t>(2000 + n)};
  }
  return {0x7f000002, 3000};
}

// Job 1 of the first `workers` workers and `servers` servers.
inline SwitchJob SwitchFuzzJob(int workers, int servers) {
  SwitchJob job;
  job.job_id = 1;
  job.token = "fuzz";
  for (int w = 0; w < workers; ++w) {
    job.workers.push_back(SwitchSender(static_cast<std::uint8_t>(w)));
  }
  for (int s = 0; s < servers; ++s) {
    job.servers.push_back(SwitchSender(static_cast<std::uint8_t>(kSwitchWorkers + s)));
  }
  job.cells_per_array = 16;
  job.slots_per_packet = kSwitchSlotsPerPacket;
  return job;
}

inline wire::Header SwitchFuzzHeader(wire::MessageType type, std::uint32_t seq,
                                     std::uint16_t slot_count) {
  wire::Header h;
  h.type = type;
  h.job_id = 1;
  h.seq = seq;
  h.slot_count = slot_count;
  return h;
}

// Installs the job of worker 0 and server 0 alone and completes its epoch 0:
// one DATA (cells 3 of array 0, 15 of array 2 and a saturating cell 7 of
// array 5) and its FIN. With three workers random inputs hardly ever bring
// all three FINs; here a COLLECT of epoch 0 is answered with the written
// cells at once.
inline void CompleteEpochZero(dataplane::SwitchBackend& backend) {
  if (!backend.InstallJob(SwitchFuzzJob(1, 1)).ok) std::abort();
  std::array<wire::Slot, wire::kMaxSlots> slots{};
  slots[0] = {true, false, 3, std::bit_cast<std::uint32_t>(1.5f)};
  slots[2] = {true, false, 15, std::bit_cast<std::uint32_t>(-2.0f)};
  slots[5] = {true, false, 7, std::bit_cast<std::uint32_t>(1e30f)};
  for (const auto& [header, count] :
       {std::pair{SwitchFuzzHeader(wire::MessageType::kData, 0, 6), 6},
        std::pair{SwitchFuzzHeader(wire::MessageType::kFin, 1, 0), 0}}) {
    std::array<std::uint8_t, wire::kMaxMessageBytes> bytes;
    const std::size_t length = wire::Encode(header, std::span(slots.data(), count), bytes);
    dataplane::OutputBatch out;
    backend.Process(std::span(bytes.data(), length), SwitchSender(0), out);
    if (out.size() == 0) std::abort();  // the ACK (and READY)
  }
}

}  // namespace libra::fuzz
