#include "train/local_switchd.h"

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

namespace libra::train {
namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kStartTimeout = std::chrono::seconds(10);
constexpr auto kStopTimeout = std::chrono::seconds(3);

// Writes `line` with the prefix in one write, so it does not interleave with
// the launcher's own output lines.
void WritePrefixed(const std::string& line) {
  const std::string out = "[switchd] " + line + "\n";
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = write(STDOUT_FILENO, out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

}  // namespace

LocalSwitchd::LocalSwitchd(const std::string& self, const LocalSwitchdOptions& options)
    : echo_output_(options.echo) {
  std::vector<std::string> args = options.command_prefix;
  for (const std::string& a :
       {self, std::string("switchd"), std::string("--listen"),
        options.host + ":" + std::to_string(options.data_port), std::string("--control"),
        options.host + ":" + std::to_string(options.control_port)}) {
    args.push_back(a);
  }
  args.insert(args.end(), options.flags.begin(), options.flags.end());
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error(std::string("switchd: pipe: ") + strerror(errno));
  const pid_t parent = getpid();
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error(std::string("switchd: fork: ") + strerror(errno));
  if (pid_ == 0) {
    // Never outlive the job's launcher, however it ends.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(1);
    dup2(fds[1], STDOUT_FILENO);
    dup2(fds[1], STDERR_FILENO);
    close(fds[0]);
    close(fds[1]);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    std::fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  close(fds[1]);
  out_fd_ = fds[0];

  // The first line is {"data": "IP:PORT", "control": "IP:PORT", ...}.
  std::string output;
  const auto deadline = Clock::now() + kStartTimeout;
  size_t newline;
  while ((newline = output.find('\n')) == std::string::npos) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    pollfd fd{out_fd_, POLLIN, 0};
    char buf[4096];
    ssize_t n = 0;
    if (left > 0 && poll(&fd, 1, static_cast<int>(left)) > 0) n = read(out_fd_, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      Stop();
      throw std::runtime_error("switchd did not start" +
                               (output.empty() ? std::string() : ": " + output));
    }
    output.append(buf, static_cast<size_t>(n));
  }
  const auto first = nlohmann::json::parse(output.substr(0, newline), nullptr, false);
  if (!first.is_object() || !first.contains("data") || !first.contains("control") ||
      !first["data"].is_string() || !first["control"].is_string()) {
    Stop();
    throw std::runtime_error("switchd announced no addresses: " + output);
  }
  data_address_ = first["data"].get<std::string>();
  // The control address as the LIBRA_* contract spells it: "IP:PORT".
  control_address_ = first["control"].get<std::string>();
  if (control_address_.starts_with("tcp://")) control_address_.erase(0, 6);
  dataplane_ = first.value("dataplane", "model");
  // The announcement shows where the job's switch is; then whatever followed.
  if (echo_output_) {
    WritePrefixed(output.substr(0, newline));
    std::string rest = output.substr(newline + 1);
    for (size_t end; (end = rest.find('\n')) != std::string::npos; rest.erase(0, end + 1)) {
      WritePrefixed(rest.substr(0, end));
    }
    if (!rest.empty()) WritePrefixed(rest);
  }
  echo_ = std::thread([this] { Echo(); });
}

LocalSwitchd::~LocalSwitchd() { Stop(); }

void LocalSwitchd::Echo() {
  std::string partial;
  char buf[4096];
  while (true) {
    const ssize_t n = read(out_fd_, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    partial.append(buf, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t end; (end = partial.find('\n', start)) != std::string::npos; start = end + 1) {
      if (echo_output_) WritePrefixed(partial.substr(start, end - start));
    }
    partial.erase(0, start);
  }
  if (!partial.empty() && echo_output_) WritePrefixed(partial);
}

bool LocalSwitchd::Exited() {
  if (pid_ <= 0) return true;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) != pid_) return false;
  status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  pid_ = -1;
  return true;
}

int LocalSwitchd::Stop() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    const auto deadline = Clock::now() + kStopTimeout;
    int status = 0;
    pid_t done = 0;
    while ((done = waitpid(pid_, &status, WNOHANG)) == 0 && Clock::now() < deadline) {
      usleep(10'000);
    }
    if (done == 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
    }
    status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    pid_ = -1;
  }
  // The pipe ends once the switch is gone, which ends the echo.
  if (echo_.joinable()) echo_.join();
  if (out_fd_ >= 0) {
    close(out_fd_);
    out_fd_ = -1;
  }
  return status_;
}

}  // namespace libra::train
