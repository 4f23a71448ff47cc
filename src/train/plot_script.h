// Runs one of the project's figure scripts (scripts/plot_*.py) with a
// python3 that has matplotlib: Debian's first, since python3-matplotlib
// installs there and a python3 of the user's own earlier in PATH may lack it.
#pragma once

#include <string>
#include <vector>

namespace libra::train {

// Runs `python3 script report_path out_dir` and returns the paths of the
// `expected` figures that exist afterwards. Says on stdout why there are
// none (no script, no matplotlib, script failed); never throws.
std::vector<std::string> RunPlotScript(const std::string& script, const std::string& report_path,
                                       const std::string& out_dir,
                                       const std::vector<std::string>& expected);

}  // namespace libra::train
