// The switch program's fuzz corpus (tests/fuzz/corpus/switch_program, the
// inputs of fuzz_switch_program.cpp: first byte the sender, the rest the
// datagram) and seeded random mutations of it, through the XDP program
// (BPF_PROG_TEST_RUN) and the model, which must agree on every output
// packet and counter: as the fuzz target does, once through a switch that
// keeps its state from input to input (the full job), and once through one
// whose epoch 0 is complete, set up afresh for each input. Skips where the
// XDP program cannot be loaded (not root, no BPF).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <vector>

#include "common/backend_agreement.h"
#include "dataplane/program.h"
#include "fuzz/fuzz_switch_job.h"
#include "xdp/xdp_program.h"

namespace libra::xdp {
namespace {

namespace fs = std::filesystem;
using Input = std::vector<std::uint8_t>;

std::vector<Input> ReadCorpus() {
  std::vector<fs::path> paths;
  for (const auto& entry : fs::directory_iterator(LIBRA_SWITCH_FUZZ_CORPUS)) {
    if (entry.is_regular_file()) paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());  // the same order, so the same run, every time
  std::vector<Input> corpus;
  for (const fs::path& p : paths) {
    std::ifstream in(p, std::ios::binary);
    corpus.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return corpus;
}

// One libFuzzer-like mutation: a bit, a byte, an interesting value, a byte
// in or out, a cut, a grown tail, a splice with another input, the sender.
Input Mutate(Input input, const std::vector<Input>& corpus, std::mt19937& rng) {
  auto pick = [&](std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
  };
  if (input.empty()) input.push_back(0);
  const std::size_t at = pick(input.size());
  switch (pick(8)) {
    case 0:
      input[at] ^= static_cast<std::uint8_t>(1u << pick(8));
      break;
    case 1:
      input[at] = static_cast<std::uint8_t>(pick(256));
      break;
    case 2: {
      const std::uint8_t interesting[] = {0, 1, 0x7f, 0x80, 0xff, 0x20, 0x40};
      input[at] = interesting[pick(std::size(interesting))];
      break;
    }
    case 3:
      input.insert(input.begin() + static_cast<std::ptrdiff_t>(at),
                   static_cast<std::uint8_t>(pick(256)));
      break;
    case 4:
      if (input.size() > 1) input.erase(input.begin() + static_cast<std::ptrdiff_t>(at));
      break;
    case 5:
      input.resize(1 + pick(input.size()));
      break;
    case 6:
      input.resize(input.size() + 1 + pick(16), static_cast<std::uint8_t>(pick(256)));
      break;
    default: {
      const Input& other = corpus[pick(corpus.size())];
      input.resize(at);
      input.insert(input.end(),
                   other.begin() + static_cast<std::ptrdiff_t>(std::min(at, other.size())),
                   other.end());
      if (input.empty()) input.push_back(static_cast<std::uint8_t>(pick(256)));
      break;
    }
  }
  return input;
}

TEST(XdpFuzzCorpusTest, CorpusAndMutationsGetTheModelsAnswers) {
  const std::vector<Input> corpus = ReadCorpus();
  ASSERT_FALSE(corpus.empty()) << "no corpus in " << LIBRA_SWITCH_FUZZ_CORPUS;
  std::string error;
  const UdpEndpoint address{0x0afffffeu, 9000};
  auto xdp_full = XdpProgram::Load(dataplane::PipelineProfile::Tofino1(), address, &error);
  if (xdp_full == nullptr) GTEST_SKIP() << "XDP program cannot be loaded here: " << error;
  auto xdp_done = XdpProgram::Load(dataplane::PipelineProfile::Tofino1(), address, &error);
  ASSERT_NE(xdp_done, nullptr) << error;

  dataplane::Program full;
  const SwitchJob job = fuzz::SwitchFuzzJob(fuzz::kSwitchWorkers, fuzz::kSwitchServers);
  ASSERT_TRUE(full.InstallJob(job).ok);
  ASSERT_TRUE(xdp_full->InstallJob(job).ok);
  dataplane::Program done_template;
  fuzz::CompleteEpochZero(done_template);

  std::vector<Input> inputs = corpus;
  std::mt19937 rng(24);
  constexpr int kMutationsPerInput = 40;
  for (const Input& seed : corpus) {
    Input mutated = seed;
    // Chains of mutations, as a fuzzer's inputs drift from the seeds.
    for (int m = 0; m < kMutationsPerInput; ++m)
      inputs.push_back(mutated = Mutate(mutated, corpus, rng));
  }

  std::uint64_t outputs = 0;
  for (std::size_t n = 0; n < inputs.size(); ++n) {
    const Input& input = inputs[n];
    if (input.empty()) continue;
    const std::span<const std::uint8_t> datagram(input.data() + 1, input.size() - 1);
    const UdpEndpoint from = fuzz::SwitchSender(input[0]);
    const bool seed = n < corpus.size();
    const std::string what = (seed ? "corpus input " : "mutation ") + std::to_string(n);

    // The full job, state kept: outputs and every counter alike.
    dataplane::OutputBatch model_out, xdp_out;
    full.Process(datagram, from, model_out);
    xdp_full->Process(datagram, from, xdp_out);
    ASSERT_EQ(testing::DifferentOutputs(model_out, 0, xdp_out, 0), "") << what << " (full job)";
    ASSERT_EQ(testing::DifferentCounters(full.counters(), xdp_full->Counters()), "")
        << what << " (full job)";
    outputs += model_out.size();

    // Epoch 0 complete, afresh: outputs and what this input added to the
    // counters alike.
    dataplane::Program done = done_template;
    fuzz::CompleteEpochZero(*xdp_done);
    const dataplane::ProgramCounters model_before = done.counters();
    const dataplane::ProgramCounters xdp_before = xdp_done->Counters();
    model_out.Clear();
    xdp_out.Clear();
    done.Process(datagram, from, model_out);
    xdp_done->Process(datagram, from, xdp_out);
    ASSERT_EQ(testing::DifferentOutputs(model_out, 0, xdp_out, 0), "") << what << " (epoch done)";
    ASSERT_EQ(testing::DifferentCounters(testing::CounterDelta(model_before, done.counters()),
                                         testing::CounterDelta(xdp_before, xdp_done->Counters())),
              "")
        << what << " (epoch done)";
    outputs += model_out.size();
  }
  // The inputs reach the answers, not only the drops.
  EXPECT_GT(outputs, corpus.size());
  EXPECT_GT(full.counters()[dataplane::Event::kValuesAggregated], 0u);
  EXPECT_GT(full.counters().TotalDrops(), 0u);
}

}  // namespace
}  // namespace libra::xdp
