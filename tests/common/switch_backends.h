// The back ends the switch's scenario tests run against, by name: "model"
// (the C++ pipeline, dataplane::Program) and "xdp" (the XDP program through
// BPF_PROG_TEST_RUN, built when LIBRA_HAVE_XDP). The xdp back end runs in
// lockstep with a model: every packet goes through both, and their output
// packets (destination and every byte) and all their counters must agree
// after every packet, so a scenario's own assertions check the XDP answers
// and the lockstep checks that they are the model's, bit for bit.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "common/backend_agreement.h"
#include "dataplane/program.h"
#if defined(LIBRA_HAVE_XDP)
#include "xdp/xdp_program.h"
#endif

namespace libra::testing {

// The back-end names this build can run.
inline std::vector<std::string> SwitchBackendNames() {
#if defined(LIBRA_HAVE_XDP)
  return {"model", "xdp"};
#else
  return {"model"};
#endif
}

#if defined(LIBRA_HAVE_XDP)
class LockstepBackend final : public dataplane::SwitchBackend {
 public:
  explicit LockstepBackend(std::unique_ptr<xdp::XdpProgram> xdp) : xdp_(std::move(xdp)) {}

  dataplane::InstallResult InstallJob(const SwitchJob& job) override {
    const dataplane::InstallResult model = model_.InstallJob(job);
    dataplane::InstallResult result = xdp_->InstallJob(job);
    EXPECT_EQ(result.ok, model.ok);
    EXPECT_EQ(result.error, model.error);
    return result;
  }
  void RemoveJob() override {
    model_.RemoveJob();
    xdp_->RemoveJob();
  }
  const SwitchJob* job() const override { return xdp_->job(); }
  const dataplane::PipelineProfile& profile() const override { return xdp_->profile(); }
  dataplane::ProgramCounters Counters() const override { return xdp_->Counters(); }

  void Process(std::span<const std::uint8_t> packet, const UdpEndpoint& source,
               dataplane::OutputBatch& out) override {
    dataplane::OutputBatch model_out;
    model_.Process(packet, source, model_out);
    const std::size_t first = out.size();
    xdp_->Process(packet, source, out);
    EXPECT_EQ(DifferentOutputs(model_out, 0, out, first), "");
    ExpectSameCounters();
  }

  void ExpectSameCounters() const {
    EXPECT_EQ(DifferentCounters(model_.counters(), xdp_->Counters()), "");
  }

 private:
  dataplane::Program model_;
  std::unique_ptr<xdp::XdpProgram> xdp_;
};
#endif

// The back end `name`, or nullptr with the reason in *skip (the XDP program
// cannot be loaded here: not root, no CAP_BPF, no BPF support).
inline std::unique_ptr<dataplane::SwitchBackend> MakeSwitchBackend(const std::string& name,
                                                                   std::string* skip) {
  if (name == "model") return std::make_unique<dataplane::Program>();
#if defined(LIBRA_HAVE_XDP)
  if (name == "xdp") {
    auto xdp = xdp::XdpProgram::Load(dataplane::PipelineProfile::Tofino1(),
                                     UdpEndpoint{0x0afffffeu, 9000}, skip);
    if (xdp == nullptr) return nullptr;
    return std::make_unique<LockstepBackend>(std::move(xdp));
  }
#endif
  *skip = "no back end named " + name + " in this build";
  return nullptr;
}

}  // namespace libra::testing
