// Fuzzes the wire decoder and the switch program together. The first byte
// picks the sender (a worker, a server or a stranger), the rest is the
// datagram. Every input must be either processed or dropped and counted; a
// decoded message must encode back to the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "dataplane/program.h"
#include "libra/wire.h"

namespace {

using namespace libra;

constexpr int kWorkers = 3;
constexpr int kServers = 2;

UdpEndpoint Sender(std::uint8_t which) {
  const int n = which % (kWorkers + kServers + 1);
  if (n < kWorkers) return {0x7f000001, static_cast<std::uint16_t>(1000 + n)};
  if (n < kWorkers + kServers) return {0x7f000001, static_cast<std::uint16_t>(2000 + n)};
  return {0x7f000002, 3000};
}

dataplane::Program& TheProgram() {
  static dataplane::Program* program = [] {
    auto* p = new dataplane::Program();
    SwitchJob job;
    job.job_id = 1;
    job.token = "fuzz";
    for (int w = 0; w < kWorkers; ++w) job.workers.push_back(Sender(static_cast<std::uint8_t>(w)));
    for (int s = 0; s < kServers; ++s) {
      job.servers.push_back(Sender(static_cast<std::uint8_t>(kWorkers + s)));
    }
    job.cells_per_array = 16;
    job.slots_per_packet = 8;
    if (!p->InstallJob(job).ok) std::abort();
    return p;
  }();
  return *program;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::span<const std::uint8_t> datagram(data + 1, size - 1);

  wire::Message message;
  if (wire::Decode(datagram, &message) == wire::DecodeError::kNone) {
    std::vector<std::uint8_t> again(datagram.size());
    // Reserved slot bits other than V and S do not survive; compare the rest.
    if (wire::Encode(message.header, message.slots, again) != datagram.size()) std::abort();
    for (std::size_t i = 0; i < wire::kHeaderBytes; ++i) {
      if (again[i] != datagram[i]) std::abort();
    }
  }

  dataplane::Program& program = TheProgram();
  const std::uint64_t before = program.counters()[dataplane::Event::kPacketsIn];
  dataplane::OutputBatch out;
  program.Process(datagram, Sender(data[0]), out);
  if (program.counters()[dataplane::Event::kPacketsIn] != before + 1) std::abort();
  for (std::size_t i = 0; i < out.size(); ++i) {
    wire::Message reply;
    if (wire::Decode(out[i].payload(), &reply) != wire::DecodeError::kNone) std::abort();
  }
  return 0;
}
