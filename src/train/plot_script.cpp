#include "train/plot_script.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>

namespace libra::train {

std::vector<std::string> RunPlotScript(const std::string& script, const std::string& report_path,
                                       const std::string& out_dir,
                                       const std::vector<std::string>& expected) {
  namespace fs = std::filesystem;
  if (!fs::exists(script)) {
    std::cout << "figures: " << script << " not found; skipped\n";
    return {};
  }
  std::string python;
  for (const char* candidate : {"/usr/bin/python3", "python3"}) {
    const std::string probe = std::string(candidate) + " -c 'import matplotlib' >/dev/null 2>&1";
    if (std::system(probe.c_str()) == 0) {
      python = candidate;
      break;
    }
  }
  if (python.empty()) {
    std::cout << "figures: python3 with matplotlib is not installed (Debian: python3-matplotlib); "
                 "skipped\n";
    return {};
  }
  const std::string command = python + " '" + script + "' '" + report_path + "' '" + out_dir + "'";
  if (std::system(command.c_str()) != 0) {
    std::cout << "figures: " << script << " failed\n";
    return {};
  }
  std::vector<std::string> figures;
  for (const std::string& name : expected) {
    const fs::path figure = fs::path(out_dir) / name;
    if (fs::exists(figure)) figures.push_back(figure.string());
  }
  return figures;
}

}  // namespace libra::train
