#include "train/train_report.h"

#include <cstdio>
#include <string>

namespace libra::train {
namespace {

std::string Format(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, value);
  return buf;
}

std::string Count(int n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

std::string Megabytes(uint64_t bytes) {
  return Format("%.1f MB", static_cast<double>(bytes) / 1e6);
}

}  // namespace

void PrintTrainSummary(std::ostream& out, const nlohmann::json& report) {
  const nlohmann::json& config = report.at("config");
  const nlohmann::json& final = report.at("final");
  out << "\n"
      << "  model            " << config.value("model", "?") << " ("
      << config.value("optimizer", "?") << "), " << Count(config.value("workers", 0), "worker")
      << " x batch " << config.value("batch_per_worker", 0) << ", "
      << Count(config.value("servers", 0), "server") << ", "
      << Count(config.value("epochs", 0), "epoch") << "\n"
      << "  samples/s        "
      << Format("%.0f", report.at("throughput").value("samples_per_second", 0.0)) << "\n"
      << "  held-out loss    " << Format("%.4f", final.value("test_log_loss", 0.0)) << "\n"
      << "  held-out AUC     " << Format("%.4f", final.value("test_auc", 0.0)) << "\n"
      << "  wall time        " << Format("%.1f s", report.value("wall_seconds", 0.0)) << "\n";
  // Configured is not running: the controller may have kept the job plain
  // (the cost model, a refused install); worker 0's node says which.
  std::string plain_reason;
  for (const nlohmann::json& node : report.at("nodes")) {
    if (node.value("role", "") != "worker" || node.value("rank", -1) != 0) continue;
    const nlohmann::json hot = node.value("hot_path", nlohmann::json::object());
    if (!hot.value("active", true)) plain_reason = hot.value("plain_reason", "?");
  }
  if (config.value("hot_path", false) && !plain_reason.empty()) {
    out << "  hot path         off: " << plain_reason << "\n";
  } else if (config.value("hot_path", false)) {
    const nlohmann::json& io =
        report.value("switch", nlohmann::json::object()).value("io", nlohmann::json::object());
    out << "  hot path         switch " << report["config"]["libra"].value("LIBRA_SWITCH", "?")
        << ", " << io.value("datagrams_received", uint64_t{0}) << " packets in, "
        << io.value("datagrams_sent", uint64_t{0}) << " out\n";
  }
  out << "\n  node          bytes in      bytes out\n";
  for (const nlohmann::json& node : report.at("nodes")) {
    const std::string role = node.value("role", "?");
    if (role == "scheduler") continue;
    char name[32];
    std::snprintf(name, sizeof(name), "%s %d", role.c_str(), node.value("rank", 0));
    char line[128];
    std::snprintf(line, sizeof(line), "  %-10s %12s %14s\n", name,
                  Megabytes(node.value("bytes_received", uint64_t{0})).c_str(),
                  Megabytes(node.value("bytes_sent", uint64_t{0})).c_str());
    out << line;
  }
  out << std::flush;
}

}  // namespace libra::train
