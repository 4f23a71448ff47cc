// The subcommands of the `libra` tool. Each Add*Command declares its flags on
// `parent` and, when the user picks it, stores in `run` the function that does
// the work and returns the process exit code. main.cpp lists them all.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

namespace libra::tool {

using Runner = std::function<int()>;

// The path of this `libra` binary (nodes of a local job run it again).
std::string SelfPath();

// `--realtime` of `command`: this process and all it starts from now on under
// SCHED_FIFO (launch/realtime.h). False, having said why on stderr, when the
// system refuses; the command then exits with status 2, as for a bad flag.
bool EnterRealtime(const char* command);

// Local cluster and the main job.
void AddLaunchCommand(CLI::App& parent, Runner& run);

// Training data and training (src/train).
void AddGenDataCommand(CLI::App& parent, Runner& run);
void AddTrainCommand(CLI::App& parent, Runner& run);
void AddDemoCommand(CLI::App& parent, Runner& run);

// Hot parameters (src/hot).
void AddProfileCommand(CLI::App& parent, Runner& run);
void AddHotsetDumpCommand(CLI::App& parent, Runner& run);

// The software switch (src/switchd).
void AddSwitchdCommand(CLI::App& parent, Runner& run);
void AddSwitchdStatsCommand(CLI::App& parent, Runner& run);

// `libra bench ...`
void AddBenchKvCommand(CLI::App& bench, Runner& run);
void AddBenchDataplaneCommand(CLI::App& bench, Runner& run);
void AddBenchSwitchdCommand(CLI::App& bench, Runner& run);
void AddBenchClusterCommand(CLI::App& bench, Runner& run);
void AddBenchOverheadCommand(CLI::App& bench, Runner& run);

}  // namespace libra::tool
