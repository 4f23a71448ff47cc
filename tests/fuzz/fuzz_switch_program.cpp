// Fuzzes the wire decoder and the switch program together. The first byte
// picks the sender (a worker, a server or a stranger), the rest is the
// datagram, which two switches process (TheProgram, ProgramWithEpochDone).
// Invariants:
//   - the datagram decodes exactly when the format's rules say it is well
//     formed, and a decoded one encodes back to the same bytes
//     (fuzz_wire_model.h);
//   - every input is either processed or dropped and counted;
//   - every reply decodes as the rules say and encodes back to the same
//     bytes, and a RESULT is the compacted answer to the COLLECT that
//     caused it: its header echoes the request, NOT_READY carries no value,
//     and otherwise each value answers, in strictly increasing order (its
//     bit in the written mask), a valid slot of the request or, for a ROW
//     request with a valid slot 0, an array of the job, with SATURATED set
//     exactly when a value saturated;
//   - a REPLICA is the UPDATE that caused it, byte for byte but the type,
//     and goes to every worker of the job once.
#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#include "dataplane/program.h"
#include "fuzz_wire_model.h"
#include "wire/wire.h"

namespace {

using namespace libra;

constexpr int kWorkers = 3;
constexpr int kServers = 2;
constexpr int kSlotsPerPacket = 8;

void Check(bool ok) {
  if (!ok) std::abort();
}
void CheckNoFailure(const char* failure) {
  if (failure == nullptr) return;
  std::fprintf(stderr, "fuzz_switch_program: invariant broken: %s\n", failure);
  std::abort();
}

UdpEndpoint Sender(std::uint8_t which) {
  const int n = which % (kWorkers + kServers + 1);
  if (n < kWorkers) return {0x7f000001, static_cast<std::uint16_t>(1000 + n)};
  if (n < kWorkers + kServers) return {0x7f000001, static_cast<std::uint16_t>(2000 + n)};
  return {0x7f000002, 3000};
}

dataplane::Program* MakeProgram(int workers, int servers) {
  auto* p = new dataplane::Program();
  SwitchJob job;
  job.job_id = 1;
  job.token = "fuzz";
  for (int w = 0; w < workers; ++w) job.workers.push_back(Sender(static_cast<std::uint8_t>(w)));
  for (int s = 0; s < servers; ++s) {
    job.servers.push_back(Sender(static_cast<std::uint8_t>(kWorkers + s)));
  }
  job.cells_per_array = 16;
  job.slots_per_packet = kSlotsPerPacket;
  if (!p->InstallJob(job).ok) std::abort();
  return p;
}

// The full job (3 workers, 2 servers), which keeps its state from input to
// input.
dataplane::Program& TheProgram() {
  static dataplane::Program* program = MakeProgram(kWorkers, kServers);
  return *program;
}

wire::Header Header(wire::MessageType type, std::uint32_t seq, std::uint16_t slot_count) {
  wire::Header h;
  h.type = type;
  h.job_id = 1;
  h.seq = seq;
  h.slot_count = slot_count;
  return h;
}

// A switch whose epoch 0 is complete: a job of worker 0 and server 0 alone
// that took one DATA (cells 3 of array 0, 15 of array 2 and a saturating
// cell 7 of array 5) and its FIN. With three workers random inputs hardly
// ever bring all three FINs; here a COLLECT of epoch 0 is answered with
// the written cells at once. Each input gets a fresh copy.
const dataplane::Program& ProgramWithEpochDone() {
  static const dataplane::Program* const done = [] {
    dataplane::Program* program = MakeProgram(1, 1);
    std::array<wire::Slot, wire::kMaxSlots> slots{};
    slots[0] = {true, false, 3, std::bit_cast<std::uint32_t>(1.5f)};
    slots[2] = {true, false, 15, std::bit_cast<std::uint32_t>(-2.0f)};
    slots[5] = {true, false, 7, std::bit_cast<std::uint32_t>(1e30f)};
    for (const auto& [header, count] : {std::pair{Header(wire::MessageType::kData, 0, 6), 6},
                                        std::pair{Header(wire::MessageType::kFin, 1, 0), 0}}) {
      std::array<std::uint8_t, wire::kMaxMessageBytes> bytes;
      const std::size_t length = wire::Encode(header, std::span(slots.data(), count), bytes);
      dataplane::OutputBatch out;
      program->Process(std::span(bytes.data(), length), Sender(0), out);
      Check(out.size() > 0);  // the ACK (and READY)
    }
    return program;
  }();
  return *done;
}

// `result`'s slots are its values, each naming the COLLECT slot (register
// array) j it answers.
void CheckResult(const wire::Message& request, const wire::Message& result) {
  const wire::Header& q = request.header;
  const wire::Header& r = result.header;
  Check(q.type == wire::MessageType::kCollect);
  Check(r.job_id == q.job_id && r.node_id == q.node_id && r.epoch == q.epoch && r.seq == q.seq);
  if ((r.flags & wire::kFlagNotReady) != 0) {
    Check(r.slot_count == 0);
    return;
  }
  bool saturated = false;
  const bool by_row = (q.flags & wire::kFlagRow) != 0;
  for (std::uint32_t i = 0; i < r.slot_count; ++i) {
    const wire::Slot& slot = result.slots[i];
    if (by_row) {
      Check(slot.valid && q.slot_count >= 1 && request.slots[0].valid &&
            slot.index < static_cast<std::uint32_t>(kSlotsPerPacket));
    } else {
      Check(slot.valid && slot.index < q.slot_count && request.slots[slot.index].valid);
    }
    Check(i == 0 || slot.index > result.slots[i - 1].index);
    saturated = saturated || slot.saturated;
  }
  Check(saturated == ((r.flags & wire::kFlagSaturated) != 0));
}

// Replica `n` of an UPDATE datagram: the same bytes as type REPLICA, sent
// to worker n.
void CheckReplica(std::span<const std::uint8_t> update, const dataplane::OutputPacket& replica,
                  const std::vector<UdpEndpoint>& workers, std::size_t n) {
  Check(update.size() >= wire::kHeaderBytes &&
        update[wire::kTypeAt] == static_cast<std::uint8_t>(wire::MessageType::kUpdate));
  Check(n < workers.size() && replica.destination == workers[n]);
  const std::span<const std::uint8_t> bytes = replica.payload();
  Check(bytes.size() == update.size() && bytes[wire::kVersionAt] == update[wire::kVersionAt] &&
        bytes[wire::kTypeAt] == static_cast<std::uint8_t>(wire::MessageType::kReplica) &&
        std::equal(bytes.begin() + wire::kFlagsAt, bytes.end(), update.begin() + wire::kFlagsAt));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::span<const std::uint8_t> datagram(data + 1, size - 1);

  wire::Message message;
  const wire::DecodeError error = wire::Decode(datagram, &message);
  CheckNoFailure(fuzz::DecodeFailure(datagram, error, message));
  if (error == wire::DecodeError::kNone) {
    CheckNoFailure(fuzz::RoundTripFailure(datagram, message));
  }

  dataplane::Program done = ProgramWithEpochDone();
  for (dataplane::Program* program : {&TheProgram(), &done}) {
    const std::uint64_t before = program->counters()[dataplane::Event::kPacketsIn];
    dataplane::OutputBatch out;
    program->Process(datagram, Sender(data[0]), out);
    if (program->counters()[dataplane::Event::kPacketsIn] != before + 1) std::abort();
    std::size_t replicas = 0;
    for (std::size_t i = 0; i < out.size(); ++i) {
      wire::Message reply;
      const wire::DecodeError reply_error = wire::Decode(out[i].payload(), &reply);
      CheckNoFailure(fuzz::DecodeFailure(out[i].payload(), reply_error, reply));
      Check(reply_error == wire::DecodeError::kNone);
      CheckNoFailure(fuzz::RoundTripFailure(out[i].payload(), reply));
      if (reply.header.type == wire::MessageType::kResult) CheckResult(message, reply);
      if (reply.header.type == wire::MessageType::kReplica) {
        CheckReplica(datagram, out[i], program->job()->workers, replicas++);
      }
    }
    Check(replicas == 0 || replicas == program->job()->workers.size());
  }
  return 0;
}
