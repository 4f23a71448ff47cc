// Runs a shell command for a multi-process test and keeps its exit status
// and combined output, which the tests search for what each process printed.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace libra::test_support {

struct CommandResult {
  int status = -1;  // exit status; 128 + signal when killed
  std::string output;
};

inline CommandResult RunCommand(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return result;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) result.output.append(buf, n);
  const int status = pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

#ifdef LIBRA_BIN
// `libra ARGS`, the binary under test (LIBRA_BIN, set by
// libra_multiprocess_test), as a user types it.
inline CommandResult RunLibra(const std::string& args) {
  return RunCommand(std::string(LIBRA_BIN) + " " + args);
}
#endif

inline int CountOccurrences(const std::string& text, const std::string& word) {
  int count = 0;
  for (size_t pos = text.find(word); pos != std::string::npos; pos = text.find(word, pos + 1)) {
    ++count;
  }
  return count;
}

}  // namespace libra::test_support
