// A `libra switchd` child process for a job on this machine (`libra train
// --libra`, `libra demo`): started on loopback ports the kernel picks, which
// it announces on its first output line; its further output is echoed with
// the prefix "[switchd] ". Stopped (SIGTERM) when this object goes, and
// also if this process dies first.
#pragma once

#include <sys/types.h>

#include <string>
#include <thread>
#include <vector>

namespace libra::train {

// Where and how the child runs; the defaults are a switch on loopback whose
// output is echoed to stdout.
struct LocalSwitchdOptions {
  // Put before the command, e.g. {"ip", "netns", "exec", "NS"} to run it in a
  // network namespace.
  std::vector<std::string> command_prefix;
  std::string host = "127.0.0.1";  // the address it listens on
  // Its ports; 0: the kernel picks (a switch started again in place of a
  // dead one names the dead one's).
  int data_port = 0;
  int control_port = 0;
  bool echo = true;  // false: its further output is dropped
  // More `libra switchd` flags, e.g. {"--dataplane", "xdp", "--interface", "p0"}.
  std::vector<std::string> flags;
};

class LocalSwitchd {
 public:
  // `self` is the path of the `libra` binary. Throws std::runtime_error, with
  // the switch's own output, if it does not come up within a few seconds.
  explicit LocalSwitchd(const std::string& self, const LocalSwitchdOptions& options = {});
  ~LocalSwitchd();
  LocalSwitchd(const LocalSwitchd&) = delete;
  LocalSwitchd& operator=(const LocalSwitchd&) = delete;

  // "HOST:port": UDP data (LIBRA_SWITCH) and control (LIBRA_SWITCH_CONTROL).
  const std::string& data_address() const { return data_address_; }
  const std::string& control_address() const { return control_address_; }

  // Stops it; returns its exit status (0 for a clean stop).
  int Stop();

  // Its process id while it runs (-1 after Stop).
  pid_t pid() const { return pid_; }

  // The back end it announced it runs ("model" or "xdp").
  const std::string& dataplane() const { return dataplane_; }

  // True once the process has ended (killed, or exited by itself); its
  // status is then what Stop() returns.
  bool Exited();

 private:
  void Echo();

  bool echo_output_ = true;
  pid_t pid_ = -1;
  int out_fd_ = -1;
  std::string data_address_;
  std::string control_address_;
  std::string dataplane_;
  std::thread echo_;
  int status_ = 0;
};

}  // namespace libra::train
