// The XDP back end's own cases: the frame around the packet (not the
// switch's traffic, Ethernet padding, truncated UDP), the user-space part's
// refusals, and many mutated packets of every type through the XDP program
// and the model in lockstep (every output and counter compared). The
// scenarios shared with the model are tests/dataplane/program_test.cpp.
#include "xdp/xdp_program.h"

#include <gtest/gtest.h>
#include <linux/bpf.h>

#include <algorithm>
#include <random>
#include <vector>

#include "common/switch_backends.h"
#include "switchd/loss_injector.h"
#include "wire/wire.h"

namespace libra::xdp {
namespace {

constexpr std::uint32_t kJob = 5;
constexpr int kWorkers = 3;
constexpr int kServers = 2;
constexpr int kSlots = 8;
constexpr std::uint32_t kCells = 32;
const UdpEndpoint kSwitch{0x0afffffeu, 9000};

UdpEndpoint Worker(int w) { return {0x0a000001u + static_cast<std::uint32_t>(w), 5000}; }
UdpEndpoint Server(int s) { return {0x0a000101u + static_cast<std::uint32_t>(s), 6000}; }

SwitchJob MakeJob(int slots = kSlots) {
  SwitchJob job;
  job.job_id = kJob;
  job.token = "secret";
  for (int w = 0; w < kWorkers; ++w) job.workers.push_back(Worker(w));
  for (int s = 0; s < kServers; ++s) job.servers.push_back(Server(s));
  job.cells_per_array = kCells;
  job.slots_per_packet = slots;
  return job;
}

std::vector<std::uint8_t> Probe() {
  wire::Header header;
  header.type = wire::MessageType::kProbe;
  header.seq = 3;
  std::vector<std::uint8_t> bytes(wire::kHeaderBytes);
  EXPECT_EQ(wire::Encode(header, {}, bytes), bytes.size());
  return bytes;
}

class XdpProgramTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    program_ = XdpProgram::Load(dataplane::PipelineProfile::Tofino1(), kSwitch, &error);
    if (program_ == nullptr) GTEST_SKIP() << "XDP program cannot be loaded here: " << error;
    ASSERT_TRUE(program_->InstallJob(MakeJob()).ok);
  }
  std::unique_ptr<XdpProgram> program_;
};

TEST_F(XdpProgramTest, OtherTrafficPassesUntouchedAndIsCounted) {
  const std::vector<std::uint8_t> probe = Probe();
  std::vector<std::uint8_t> frame = UdpFrame(probe, Worker(0), {kSwitch.ipv4, 53});
  TestRunResult run = program_->TestRun(frame);
  EXPECT_EQ(run.verdict, static_cast<std::uint32_t>(XDP_PASS));
  EXPECT_EQ(run.frame, frame);
  frame = UdpFrame(probe, Worker(0), {kSwitch.ipv4 + 1, kSwitch.port});  // another host
  EXPECT_EQ(program_->TestRun(frame).verdict, static_cast<std::uint32_t>(XDP_PASS));
  frame[12] = 0x86;  // not IPv4
  frame[13] = 0xdd;
  EXPECT_EQ(program_->TestRun(frame).verdict, static_cast<std::uint32_t>(XDP_PASS));
  EXPECT_EQ(program_->xdp_counters().not_switch_traffic, 3u);
  EXPECT_EQ(program_->Counters()[dataplane::Event::kPacketsIn], 0u);
}

TEST_F(XdpProgramTest, PaddingAfterTheUdpPayloadIsIgnoredAndAShortUdpIsTruncated) {
  std::vector<std::uint8_t> frame = UdpFrame(Probe(), Worker(0), kSwitch);
  frame.resize(frame.size() + 10, 0);  // as an Ethernet minimum frame pads
  const TestRunResult run = program_->TestRun(frame);
  ASSERT_EQ(run.verdict, static_cast<std::uint32_t>(XDP_TX));
  ASSERT_EQ(run.frame.size(), 14u + 20 + 8 + wire::kHeaderBytes);
  EXPECT_EQ(run.frame[14 + 28 + wire::kTypeAt],
            static_cast<std::uint8_t>(wire::MessageType::kProbeReply));
  frame.resize(14 + 20 + 8 + 4);  // the UDP header announces more than there is
  EXPECT_EQ(program_->TestRun(frame).verdict, static_cast<std::uint32_t>(XDP_DROP));
  EXPECT_EQ(program_->Counters()[dataplane::DropReason::kTruncated], 1u);
}

TEST_F(XdpProgramTest, TheUserSpacePartRefusesWhatIsNoUpcall) {
  dataplane::OutputBatch out;
  program_->HandleUpcall(Probe(), Worker(0), out);  // not an upcall
  std::vector<std::uint8_t> update(wire::UpdateSize(std::vector<wire::CellValue>{{0, 1, 0}}));
  wire::Header header;
  header.type = wire::MessageType::kUpdate;
  header.job_id = kJob;
  wire::EncodeUpdate(header, std::vector<wire::CellValue>{{0, 1, 0}}, update);
  program_->HandleUpcall(update, Worker(0), out);  // an UPDATE, but from a worker
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(program_->xdp_counters().upcalls_refused, 2u);
  program_->HandleUpcall(update, Server(0), out);
  EXPECT_EQ(out.size(), static_cast<std::size_t>(kWorkers) + 1);
}

// --drop-rate with --drop-seed under XDP: the program draws from switchd's
// LossInjector sequences (arrivals with the seed, answers with switchd's
// egress seed), so a seed drops the same packets and answers, run after run,
// and the model's switch with that seed would drop the same positions.
TEST_F(XdpProgramTest, InjectedLossFollowsTheSeedNumberForNumber) {
  const std::vector<std::uint8_t> probe = Probe();
  std::uint64_t lost_total = 0;
  for (const std::uint64_t seed : {1u, 7u}) {
    for (int run = 0; run < 2; ++run) {
      program_->SetFailureInjection(0.3, seed, seed ^ 0x5bd1e995u, -1);
      switchd::LossInjector arrivals(0.3, seed), answers(0.3, seed ^ 0x5bd1e995u);
      for (int k = 0; k < 300; ++k) {
        const XdpCounters before = program_->xdp_counters();
        dataplane::OutputBatch out;
        program_->Process(probe, Worker(0), out);
        const XdpCounters after = program_->xdp_counters();
        const bool lost_in = arrivals.ShouldDrop();
        const bool lost_out = !lost_in && answers.ShouldDrop();
        lost_total += lost_in || lost_out;
        ASSERT_EQ(after.ingress_loss_injected - before.ingress_loss_injected, lost_in ? 1u : 0u)
            << "seed " << seed << " packet " << k;
        ASSERT_EQ(after.egress_loss_injected - before.egress_loss_injected, lost_out ? 1u : 0u)
            << "seed " << seed << " packet " << k;
        ASSERT_EQ(out.size(), lost_in || lost_out ? 0u : 1u) << "seed " << seed << " packet " << k;
      }
    }
  }
  EXPECT_GT(lost_total, 0u);
  program_->SetFailureInjection(0, 1, 1, -1);
  dataplane::OutputBatch out;
  program_->Process(probe, Worker(0), out);
  EXPECT_EQ(out.size(), 1u);
}

// Valid packets of every kind, then one mutation each (a byte, the length,
// the type), through both back ends: whatever the bytes, the answers and
// the counters are the model's.
// `rounds` random packets of every type, most mutated, for a job of `slots`
// slots a packet, through the XDP back end in lockstep with the model (which
// compares every output and counter); `full` makes half the slotted packets
// full ones. The counters at the end.
dataplane::ProgramCounters RunLockstep(dataplane::SwitchBackend& backend, int slots, int rounds,
                                       bool full) {
  EXPECT_TRUE(backend.InstallJob(MakeJob(slots)).ok);
  const auto kSlots = static_cast<std::uint32_t>(slots);
  std::mt19937 rng(7);
  auto pick = [&](std::uint32_t n) {
    return std::uniform_int_distribution<std::uint32_t>(0, n - 1)(rng);
  };
  for (int round = 0; round < rounds; ++round) {
    const std::uint32_t epoch = pick(4);
    const int kind = static_cast<int>(pick(5));
    wire::Header header;
    header.job_id = kJob;
    header.epoch = epoch;
    header.seq = pick(8);
    std::vector<std::uint8_t> bytes;
    UdpEndpoint from;
    if (kind == 3) {
      const int s = static_cast<int>(pick(kServers));
      header.type = wire::MessageType::kUpdate;
      header.node_id = static_cast<std::uint16_t>(s);
      std::vector<wire::CellValue> cells;
      for (std::uint32_t row = 0; row < 3; ++row)
        cells.push_back({pick(kSlots), row, pick(1u << 31)});
      std::sort(cells.begin(), cells.end(), [](const auto& a, const auto& b) {
        return a.index != b.index ? a.index < b.index : a.array < b.array;
      });
      cells.erase(std::unique(cells.begin(), cells.end(),
                              [](const auto& a, const auto& b) {
                                return a.index == b.index && a.array == b.array;
                              }),
                  cells.end());
      bytes.resize(wire::UpdateSize(cells));
      wire::EncodeUpdate(header, cells, bytes);
      from = Server(s);
    } else {
      const bool server = kind == 2;
      const int node = static_cast<int>(pick(server ? kServers : kWorkers));
      header.type = kind == 0   ? wire::MessageType::kData
                    : kind == 1 ? wire::MessageType::kFin
                    : kind == 2 ? wire::MessageType::kCollect
                                : wire::MessageType::kProbe;
      header.node_id = static_cast<std::uint16_t>(node);
      header.flags = kind == 2 && pick(4) == 0 ? wire::kFlagRow : 0;
      header.slot_count = kind == 1              ? 0
                          : full && pick(2) == 0 ? static_cast<std::uint16_t>(kSlots)
                                                 : static_cast<std::uint16_t>(pick(kSlots + 1));
      std::vector<wire::Slot> slots(header.slot_count);
      const std::uint32_t row = pick(kCells);
      for (auto& slot : slots) {
        slot.valid = pick(5) != 0;
        slot.index = pick(3) == 0 ? pick(kCells) : row;
        // Floats of every magnitude, NaN and infinity among them.
        slot.value = pick(4) == 0 ? pick(0xffffffffu)
                                  : (pick(2) << 31) | ((100 + pick(60)) << 23) | pick(1u << 23);
      }
      bytes.resize(wire::EncodedSize(header.slot_count));
      wire::Encode(header, slots, bytes);
      from = server ? Server(node) : Worker(node);
      if (kind == 1) header.seq = pick(3);
    }
    switch (pick(6)) {  // one mutation, or none
      case 0:
        bytes[pick(static_cast<std::uint32_t>(bytes.size()))] ^=
            static_cast<std::uint8_t>(1u << pick(8));
        break;
      case 1:
        bytes.resize(pick(static_cast<std::uint32_t>(bytes.size()) + 9));
        break;
      case 2:
        from = pick(2) == 0 ? Worker(static_cast<int>(pick(kWorkers)))
                            : Server(static_cast<int>(pick(kServers)));
        break;
      default:
        break;
    }
    dataplane::OutputBatch out;
    backend.Process(bytes, from, out);
    if (::testing::Test::HasFailure()) {
      ADD_FAILURE() << "round " << round << " differs";
      break;
    }
  }
  return backend.Counters();
}

TEST(XdpLockstepTest, MutatedPacketsGetTheModelsAnswers) {
  std::string skip;
  auto backend = testing::MakeSwitchBackend("xdp", &skip);
  if (backend == nullptr) GTEST_SKIP() << "XDP back end unavailable: " << skip;
  const dataplane::ProgramCounters counters = RunLockstep(*backend, kSlots, 3000, false);
  EXPECT_GT(counters[dataplane::Event::kValuesAggregated], 0u);
  EXPECT_GT(counters[dataplane::Event::kEpochsReady] + counters[dataplane::Event::kResultsSent],
            0u);
  EXPECT_GT(counters.TotalDrops(), 0u);
}

// 32 slots a packet: a full DATA packet's payload is copied out of the frame
// by the program's own loads rather than bpf_xdp_load_bytes.
TEST(XdpLockstepTest, FullPacketsOfThirtyTwoSlotsGetTheModelsAnswers) {
  std::string skip;
  auto backend = testing::MakeSwitchBackend("xdp", &skip);
  if (backend == nullptr) GTEST_SKIP() << "XDP back end unavailable: " << skip;
  const dataplane::ProgramCounters counters = RunLockstep(*backend, 32, 3000, true);
  EXPECT_GT(counters[dataplane::Event::kDataPackets], 300u);
  EXPECT_GT(counters[dataplane::Event::kValuesAggregated], 0u);
  EXPECT_GT(counters.TotalDrops(), 0u);
}

}  // namespace
}  // namespace libra::xdp
