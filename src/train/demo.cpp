#include "train/demo.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "train/synthetic_data.h"
#include "train/train_job.h"
#include "train/train_report.h"

namespace libra::train {
namespace {

namespace fs = std::filesystem;

// The synthetic set for `rows` rows: made once, then reused. Written under a
// temporary name and renamed, so an interrupted run leaves no half file.
std::string EnsureSyntheticData(const DemoOptions& options) {
  const fs::path path =
      fs::path(options.out_dir) / ("synthetic-" + std::to_string(options.rows) + "-rows.libsvm");
  if (fs::exists(path)) {
    std::cout << "using the cached data set " << path.string() << "\n";
    return path.string();
  }
  SyntheticOptions synthetic;
  synthetic.rows = options.rows;
  synthetic.seed = options.seed;
  std::cout << "generating " << options.rows << " rows of synthetic CTR data into " << path.string()
            << " ..." << std::endl;
  const auto start = std::chrono::steady_clock::now();
  const fs::path partial = path.string() + ".partial";
  SyntheticWorkload(synthetic).Write(partial.string());
  fs::rename(partial, path);
  std::printf("  done in %.1f s\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return path.string();
}

}  // namespace

int RunDemo(const DemoOptions& options, const std::string& self) {
  const auto start = std::chrono::steady_clock::now();
  std::cout << "libra demo: " << kNoHotPathNotice << "\n";
  TrainJobConfig config;
  try {
    fs::create_directories(options.out_dir);
    config.data_path = options.data_path.empty() ? EnsureSyntheticData(options) : options.data_path;
    config.model.kind = ParseModelKind(options.model);
  } catch (const std::exception& e) {
    std::cerr << "libra demo: " << e.what() << "\n";
    return 1;
  }
  config.model.seed = options.seed;
  config.epochs = options.epochs;
  config.workers = options.workers;
  config.servers = options.servers;
  config.json_path = (fs::path(options.out_dir) / "report.json").string();
  config.timeout_s = 3600;
  const int status = LaunchLocalTraining(config, self);
  if (status != 0) {
    std::cerr << "libra demo: training failed (exit status " << status << ")\n";
    return status;
  }
  nlohmann::json report;
  try {
    std::ifstream in(config.json_path);
    report = nlohmann::json::parse(in);
    report["demo"] = {
        {"hot_path", false},
        {"notice", kNoHotPathNotice},
        {"wall_seconds",
         std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()}};
    std::ofstream(config.json_path) << report.dump(2) << "\n";
  } catch (const std::exception& e) {
    std::cerr << "libra demo: cannot read the report " << config.json_path << ": " << e.what()
              << "\n";
    return 1;
  }
  std::cout << "\n=== libra demo: plain parameter server (" << kNoHotPathNotice << ") ===\n"
            << "  data             " << config.data_path << " ("
            << report["data"].value("train_rows", 0) << " training rows, "
            << report["data"].value("test_rows", 0) << " held out)\n";
  PrintTrainSummary(std::cout, report);
  std::printf("\n  demo wall time   %.1f s (data, launch and training)\n  report           %s\n",
              report["demo"].value("wall_seconds", 0.0), config.json_path.c_str());
  return 0;
}

}  // namespace libra::train
