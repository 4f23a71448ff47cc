// The subcommands of the `libra` tool. Each Add*Command declares its flags on
// `parent` and, when the user picks it, stores in `run` the function that does
// the work and returns the process exit code. main.cpp lists them all.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace libra::tool {

using Runner = std::function<int()>;

// Local cluster and the main job.
void AddLaunchCommand(CLI::App& parent, Runner& run);


}  // namespace libra::tool
