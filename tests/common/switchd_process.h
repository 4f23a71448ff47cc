// A `libra switchd` process for multi-process tests: started on loopback
// ports chosen by the kernel, which it announces as JSON on its first stdout
// line. LIBRA_BIN (set by libra_multiprocess_test) is the `libra` binary.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "libra/switch_job.h"

namespace libra::test_support {

class SwitchdProcess {
 public:
  explicit SwitchdProcess(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {LIBRA_BIN,     "switchd",   "--listen",
                                     "127.0.0.1:0", "--control", "127.0.0.1:0"};
    args.insert(args.end(), extra.begin(), extra.end());
    int out[2];
    if (pipe(out) != 0) throw std::runtime_error("pipe");
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], STDOUT_FILENO);
      close(out[0]);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(out[1]);
    stdout_ = fdopen(out[0], "r");
    char line[512] = {};
    if (fgets(line, sizeof(line), stdout_) == nullptr) throw std::runtime_error("no first line");
    const auto first = nlohmann::json::parse(line);
    data = *UdpEndpoint::Parse(first["data"].get<std::string>());
    control = first["control"].get<std::string>();
  }
  SwitchdProcess(const SwitchdProcess&) = delete;
  SwitchdProcess& operator=(const SwitchdProcess&) = delete;

  // Stops it with `signal`; returns its exit status (128 + signal when killed).
  int Stop(int signal = SIGTERM) {
    if (pid_ <= 0) return -1;
    kill(pid_, signal);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    fclose(stdout_);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  ~SwitchdProcess() { Stop(); }

  UdpEndpoint data;     // where DATA, COLLECT, UPDATE... go
  std::string control;  // the control port, "IP:PORT"

 private:
  pid_t pid_ = -1;
  FILE* stdout_ = nullptr;
};

}  // namespace libra::test_support
