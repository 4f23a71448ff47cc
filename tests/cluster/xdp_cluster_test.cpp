// Training through the XDP switch on real interfaces: a namespace cluster
// (NetnsCluster: scheduler, 2 servers and 3 workers, each in its own
// namespace, veths to a bridge in the switch's namespace), `libra switchd
// --dataplane xdp` with its program attached to the switch's ends of the
// veths, and the job's processes sending through it. The model must be the
// one the same job trains through the model switch (`--dataplane model`),
// bit for bit: with loss injected by the XDP program, and with the switch
// killed in the middle of an epoch and started again (the servers sum the
// hot keys meanwhile and give them back to the switch). Needs root (and a
// kernel that loads the program); skips with the reason otherwise.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cluster/cluster_run.h"
#include "cluster/netns_cluster.h"
#include "common/run_command.h"
#include "train/job_plan.h"

namespace libra::cluster {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test_support::RunCommand;

class XdpClusterTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    why_not_ = NetnsCluster::WhyUnavailable();
    if (!why_not_.empty()) return;
    NetnsCluster::RemoveStale();
    dir_ = fs::temp_directory_path() / ("libra-xdp-cluster-" + std::to_string(getpid()));
    fs::create_directories(dir_);
    const std::string data = (dir_ / "data.libsvm").string();
    const auto r = RunCommand(std::string(LIBRA_BIN) + " gen-data --out " + data +
                              " --rows 8000 --keys 4000 --fields 8 --seed 5 --threads 1");
    ASSERT_EQ(r.status, 0) << r.output;
    // LR, 3 workers x batch 20 for 2 passes: 240 epochs, the first 24
    // sampled, the rest on the hot path over the whole switch.
    job_.config.data_path = data;
    job_.config.model.num_fields = 8;
    job_.config.optimizer.learning_rate = 0.1f;
    job_.config.epochs = 2;
    job_.config.batch = 20;
    job_.config.workers = 3;
    job_.config.servers = 2;
    job_.config.print_summary = false;
    job_.config.progress_interval_s = 0;
    job_.config.libra.sample_fraction = 0.1;
    job_.config.libra.capacity = "0";
    job_.sample = true;
    const train::JobPlan plan = train::JobPlan::Make(8000, job_.config.test_fraction, 3, 20);
    job_.pushes_per_worker = plan.iterations_per_epoch * job_.config.epochs;
    model_switch_ = Run("model", "model");
  }
  static void TearDownTestSuite() {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  void SetUp() override {
    if (!why_not_.empty()) GTEST_SKIP() << why_not_;
    ASSERT_EQ(model_switch_.value("status", -1), 0) << model_switch_.dump(2);
    ASSERT_FALSE(model_switch_.value("model_fingerprint", "").empty());
  }

  // The job on a fresh cluster; the run's result (RunOnCluster) with the
  // report's nodes added.
  static json Run(const std::string& dataplane, const std::string& tag,
                  const std::vector<std::string>& switchd_flags = {}, bool restart = false) {
    ClusterJob job = job_;
    job.tag = tag;
    job.config.json_path = (dir_ / (tag + ".json")).string();
    ClusterRunOptions options;
    options.out_dir = dir_.string();
    options.rate_mbit = 0;  // veth speed: the switch is what is tested
    options.run_timeout_s = 120;
    options.dataplane = dataplane;
    options.switchd_flags = switchd_flags;
    options.restart_switch = restart;
    json result = RunOnCluster(job, options, LIBRA_BIN);
    std::ifstream in(job.config.json_path);
    const json report = json::parse(in, nullptr, false);
    if (!report.is_discarded()) result["nodes"] = report["nodes"];
    std::ifstream log(dir_ / (tag + ".log"));
    result["log"] = std::string(std::istreambuf_iterator<char>(log), {});
    return result;
  }

  // Skips unless the switch of `run` ran the XDP program.
  static std::string WhyNotXdp(const json& run) {
    if (run.value("dataplane", "") == "xdp") return "";
    return "switchd could not run the XDP program here and ran the model; see " +
           (dir_ / "*.log").string();
  }

  static uint64_t Backend(const json& run, const char* counter) {
    return run["switch"]["backend"].value(counter, uint64_t{0});
  }

  // Fallbacks and resumes of the servers, summed.
  static std::pair<uint64_t, uint64_t> FallbacksAndResumes(const json& run) {
    uint64_t fallbacks = 0, resumes = 0;
    for (const json& node : run.value("nodes", json::array())) {
      if (node.value("role", "") != "server" || !node["hot_path"].contains("fallback")) continue;
      fallbacks += node["hot_path"]["fallback"].value("fallbacks", 0u);
      resumes += node["hot_path"]["fallback"].value("resumes", 0u);
    }
    return {fallbacks, resumes};
  }

  static inline std::string why_not_;
  static inline fs::path dir_;
  static inline ClusterJob job_;
  static inline json model_switch_;
};

TEST_F(XdpClusterTest, TrainsTheModelOfTheModelSwitch) {
  const json xdp = Run("xdp", "xdp");
  if (const std::string why = WhyNotXdp(xdp); !why.empty()) GTEST_SKIP() << why;
  ASSERT_EQ(xdp.value("status", -1), 0) << xdp["log"].get<std::string>();
  EXPECT_EQ(xdp["model_fingerprint"], model_switch_["model_fingerprint"]);
  // The hot path ran through the kernel: DATA aggregated there, epochs
  // completed (their READYs went up to switchd), nothing refused.
  const json& events = xdp["switch"]["events"];
  EXPECT_GT(events["data_packets"].get<uint64_t>(), 0u);
  EXPECT_GT(events["results_sent"].get<uint64_t>(), 0u);
  EXPECT_EQ(events["epochs_ready"], model_switch_["switch"]["events"]["epochs_ready"]);
  EXPECT_GE(Backend(xdp, "upcalls"), events["epochs_ready"].get<uint64_t>());
  EXPECT_EQ(Backend(xdp, "upcalls_refused"), 0u);
  // Every answer fitted its frame (a RESULT longer than its COLLECT grows
  // into the headroom when veth left no tailroom), none dropped for room.
  EXPECT_EQ(Backend(xdp, "replies_without_room"), 0u);
  EXPECT_EQ(FallbacksAndResumes(xdp).first, 0u) << "the switch never failed";
}

TEST_F(XdpClusterTest, InjectedLossLeavesTheModelUnchanged) {
  const json lossy = Run("xdp", "xdp-loss", {"--drop-rate", "0.005"});
  if (const std::string why = WhyNotXdp(lossy); !why.empty()) GTEST_SKIP() << why;
  ASSERT_EQ(lossy.value("status", -1), 0) << lossy["log"].get<std::string>();
  EXPECT_EQ(lossy["model_fingerprint"], model_switch_["model_fingerprint"]);
  // Dropped by the program, on arrival and instead of answers, and repaired
  // by the senders' retransmissions.
  EXPECT_GT(lossy["switch"]["io"]["ingress_loss_injected"].get<uint64_t>(), 0u);
  EXPECT_GT(lossy["switch"]["io"]["egress_loss_injected"].get<uint64_t>(), 0u);
  EXPECT_GT(lossy["switch"]["events"]["retransmissions"].get<uint64_t>(), 0u);
}

TEST_F(XdpClusterTest, ASwitchKilledAndStartedAgainLeavesTheModelUnchanged) {
  // Epoch 60 is on the hot path (24 sampled); the switch kills itself at
  // its first DATA, which its program passed up, and the kernel detaches
  // the program with it.
  const json run = Run("xdp", "xdp-restart", {"--die-at-epoch", "60"}, /*restart=*/true);
  if (const std::string why = WhyNotXdp(run); !why.empty()) GTEST_SKIP() << why;
  ASSERT_EQ(run.value("status", -1), 0) << run["log"].get<std::string>();
  EXPECT_EQ(run["model_fingerprint"], model_switch_["model_fingerprint"]);
  EXPECT_EQ(run["switch_restarts"], 1) << run.value("switch_restart_error", "");
  const auto [fallbacks, resumes] = FallbacksAndResumes(run);
  EXPECT_EQ(fallbacks, 2u) << "each server falls back once";
  EXPECT_EQ(resumes, 2u) << "and takes the hot path back from the switch started again";
  // The switch started again ran XDP too, and aggregated the rest.
  EXPECT_GT(run["switch"]["events"]["data_packets"].get<uint64_t>(), 0u);
}

}  // namespace
}  // namespace libra::cluster
