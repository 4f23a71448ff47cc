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

#include "wire/switch_job.h"

namespace libra::test_support {

class SwitchdProcess {
 public:
  // `listen` and `control`: port 0 lets the kernel choose; a switch started
  // again in place of a dead one names the dead one's ports.
  explicit SwitchdProcess(std::vector<std::string> extra = {},
                          const std::string& listen_at = "127.0.0.1:0",
                          const std::string& control_at = "127.0.0.1:0") {
    std::vector<std::string> args = {LIBRA_BIN, "switchd",   "--listen",
                                     listen_at, "--control", control_at};
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

  // The control address as host:port (as --control and --switch-control
  // take it), without the ZeroMQ scheme `control` carries.
  std::string control_host_port() const {
    return control.starts_with("tcp://") ? control.substr(6) : control;
  }

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

  // Waits up to `seconds` for it to exit by itself (--die-at-epoch); its
  // exit status (128 + signal), or -1 if it still runs.
  int WaitForExit(double seconds) {
    for (int waited_ms = 0; pid_ > 0; waited_ms += 5) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        fclose(stdout_);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      if (waited_ms >= seconds * 1000) return -1;
      usleep(5000);
    }
    return -1;
  }

  UdpEndpoint data;     // where DATA, COLLECT, UPDATE... go
  std::string control;  // the control port, "IP:PORT"

 private:
  pid_t pid_ = -1;
  FILE* stdout_ = nullptr;
};

}  // namespace libra::test_support
