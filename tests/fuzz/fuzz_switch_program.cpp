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
//     and goes to every worker of the job once;
//   - in a build with the XDP back end, run as root: the XDP program
//     (BPF_PROG_TEST_RUN), loaded twice and fed the same inputs as the two
//     model switches, sends the same packets and adds the same counts.
//     Without root it says once that it checks the model alone.
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
#include "fuzz_switch_job.h"
#if defined(LIBRA_HAVE_XDP)
#include <unistd.h>

#include <memory>
#include <string>

#include "common/backend_agreement.h"
#include "xdp/xdp_program.h"
#endif
#include "fuzz_wire_model.h"
#include "wire/wire.h"

namespace {

using namespace libra;

constexpr int kSlotsPerPacket = fuzz::kSwitchSlotsPerPacket;
using fuzz::SwitchSender;

void Check(bool ok) {
  if (!ok) std::abort();
}
void CheckNoFailure(const char* failure) {
  if (failure == nullptr) return;
  std::fprintf(stderr, "fuzz_switch_program: invariant broken: %s\n", failure);
  std::abort();
}

// The full job (3 workers, 2 servers), which keeps its state from input to
// input.
dataplane::Program& TheProgram() {
  static dataplane::Program* program = [] {
    auto* p = new dataplane::Program();
    if (!p->InstallJob(fuzz::SwitchFuzzJob(fuzz::kSwitchWorkers, fuzz::kSwitchServers)).ok) {
      std::abort();
    }
    return p;
  }();
  return *program;
}

// A switch whose epoch 0 is complete (fuzz::CompleteEpochZero); each input
// gets a fresh copy.
const dataplane::Program& ProgramWithEpochDone() {
  static const dataplane::Program* const done = [] {
    auto* program = new dataplane::Program();
    fuzz::CompleteEpochZero(*program);
    return program;
  }();
  return *done;
}

#if defined(LIBRA_HAVE_XDP)
// The XDP program beside each model switch: [0] keeps the full job's state
// as TheProgram does, [1] has its epoch 0 completed again before each input.
struct XdpMirror {
  std::unique_ptr<xdp::XdpProgram> programs[2];
};

XdpMirror* Xdp() {
  static XdpMirror* const mirror = []() -> XdpMirror* {
    std::string error = "needs root";
    auto mirror = std::make_unique<XdpMirror>();
    for (auto& program : mirror->programs) {
      if (geteuid() == 0) {
        program = xdp::XdpProgram::Load(dataplane::PipelineProfile::Tofino1(),
                                        UdpEndpoint{0x0afffffeu, 9000}, &error);
      }
      if (program == nullptr) {
        std::fprintf(stderr, "fuzz_switch_program: the model alone (XDP: %s)\n", error.c_str());
        return nullptr;
      }
    }
    if (!mirror->programs[0]
             ->InstallJob(fuzz::SwitchFuzzJob(fuzz::kSwitchWorkers, fuzz::kSwitchServers))
             .ok) {
      std::abort();
    }
    std::fprintf(stderr, "fuzz_switch_program: the model and the XDP program\n");
    return mirror.release();
  }();
  return mirror;
}
#endif

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
  dataplane::Program* const programs[2] = {&TheProgram(), &done};
  for (int k = 0; k < 2; ++k) {
    dataplane::Program* const program = programs[k];
    const std::uint64_t before = program->counters()[dataplane::Event::kPacketsIn];
    dataplane::OutputBatch out;
#if defined(LIBRA_HAVE_XDP)
    xdp::XdpProgram* const mirror = Xdp() ? Xdp()->programs[k].get() : nullptr;
    dataplane::ProgramCounters mirror_before;
    if (mirror != nullptr) {
      if (k == 1) fuzz::CompleteEpochZero(*mirror);
      mirror_before = mirror->Counters();
    }
    const dataplane::ProgramCounters model_before = program->counters();
#endif
    program->Process(datagram, SwitchSender(data[0]), out);
    if (program->counters()[dataplane::Event::kPacketsIn] != before + 1) std::abort();
#if defined(LIBRA_HAVE_XDP)
    if (mirror != nullptr) {
      dataplane::OutputBatch mirror_out;
      mirror->Process(datagram, SwitchSender(data[0]), mirror_out);
      std::string difference = testing::DifferentOutputs(out, 0, mirror_out, 0);
      if (difference.empty()) {
        difference =
            testing::DifferentCounters(testing::CounterDelta(model_before, program->counters()),
                                       testing::CounterDelta(mirror_before, mirror->Counters()));
      }
      if (!difference.empty()) {
        std::fprintf(stderr, "fuzz_switch_program: XDP differs from the model: %s\n",
                     difference.c_str());
        std::abort();
      }
    }
#endif
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
