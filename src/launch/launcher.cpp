#include "launch/launcher.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <sstream>
#include <stdexcept>

namespace libra {

namespace {

std::atomic<int> g_interrupted{0};
void OnInterrupt(int signal) { g_interrupted = signal; }

struct Child {
  const ProcessSpec* spec;
  std::ostream* output = nullptr;
  pid_t pid = -1;
  std::chrono::steady_clock::time_point started;
  ProcessUsage usage;
  int out_fd = -1;      // the child's stdout and stderr
  std::string partial;  // output not yet ended by a newline
  bool running = true;
  int status = 0;  // exit code (128 + signal when killed)
};

pid_t Spawn(const ProcessSpec& spec, int* out_fd) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("launch: pipe: " + std::string(strerror(errno)));
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("launch: fork: " + std::string(strerror(errno)));
  if (pid == 0) {
    setpgid(0, 0);  // own group, so stopping it also stops what it started
    dup2(fds[1], STDOUT_FILENO);
    dup2(fds[1], STDERR_FILENO);
    close(fds[0]);
    close(fds[1]);
    for (const auto& [name, value] : spec.env) setenv(name.c_str(), value.c_str(), 1);
    std::vector<char*> argv;
    for (const std::string& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    std::fprintf(stderr, "launch: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  setpgid(pid, pid);
  close(fds[1]);
  fcntl(fds[0], F_SETFL, O_NONBLOCK);
  *out_fd = fds[0];
  return pid;
}

// Prints complete lines of the child's output with its prefix.
void Drain(Child& child, bool flush_partial) {
  char buf[65536];
  while (child.out_fd >= 0) {
    ssize_t n = read(child.out_fd, buf, sizeof(buf));
    if (n > 0) {
      child.partial.append(buf, n);
      continue;
    }
    if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
      close(child.out_fd);
      child.out_fd = -1;
    }
    break;
  }
  size_t start = 0, end;
  while ((end = child.partial.find('\n', start)) != std::string::npos) {
    *child.output << "[" << child.spec->name << "] " << child.partial.substr(start, end - start)
                  << "\n";
    start = end + 1;
  }
  child.partial.erase(0, start);
  if ((flush_partial || child.out_fd < 0) && !child.partial.empty()) {
    *child.output << "[" << child.spec->name << "] " << child.partial << "\n";
    child.partial.clear();
  }
  child.output->flush();
}

double Seconds(const timeval& t) { return t.tv_sec + t.tv_usec * 1e-6; }

// Records a finished child's exit status and resource use.
void Finished(Child& c, int status, const rusage& used) {
  c.running = false;
  c.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  c.usage.status = c.status;
  c.usage.user_seconds = Seconds(used.ru_utime);
  c.usage.system_seconds = Seconds(used.ru_stime);
  c.usage.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - c.started).count();
}

void Reap(std::vector<Child>& children) {
  for (Child& c : children) {
    if (!c.running) continue;
    int status;
    rusage used{};
    if (wait4(c.pid, &status, WNOHANG, &used) == c.pid) Finished(c, status, used);
  }
}

void StopAll(std::vector<Child>& children) {
  for (Child& c : children) {
    if (c.running) kill(-c.pid, SIGTERM);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (std::chrono::steady_clock::now() < deadline) {
    Reap(children);
    bool any = false;
    for (Child& c : children) any |= c.running;
    if (!any) return;
    usleep(20000);
  }
  for (Child& c : children) {
    if (c.running) kill(-c.pid, SIGKILL);
  }
  for (Child& c : children) {
    int status = 0;
    rusage used{};
    if (c.running && wait4(c.pid, &status, 0, &used) == c.pid) Finished(c, status, used);
    c.running = false;
  }
}

}  // namespace

namespace {

// Whether a TCP port on 127.0.0.1 can be bound right now; with `port` 0 the
// kernel picks one, and `port` is set to it.
bool BindsNow(int* port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(*port));
  socklen_t len = sizeof(addr);
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
                  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  close(fd);
  if (ok) *port = ntohs(addr.sin_port);
  return ok;
}

// The lowest port the kernel hands out for binds to port 0.
int FirstEphemeralPort() {
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 32768;
  in >> low;
  return low;
}

// 32 random bytes in hex: a job's PS_JOB_SECRET.
std::string RandomSecret() {
  std::ifstream urandom("/dev/urandom", std::ios::binary);
  unsigned char bytes[32];
  if (!urandom.read(reinterpret_cast<char*>(bytes), sizeof bytes)) {
    throw std::runtime_error("launch: cannot read /dev/urandom for the job's secret");
  }
  static const char kHex[] = "0123456789abcdef";
  std::string secret;
  for (unsigned char b : bytes) {
    secret += kHex[b >> 4];
    secret += kHex[b & 15];
  }
  return secret;
}

}  // namespace

int FindFreePort() {
  // The port is released before the scheduler binds it. A port the kernel
  // picked could meanwhile be picked again for any other socket (another
  // job's node binding port 0), so the port comes from below the kernel's
  // range, at random, where only another FindFreePort could choose it.
  const int first_ephemeral = FirstEphemeralPort();
  if (first_ephemeral > 11000) {
    std::mt19937 rng(std::random_device{}() ^ static_cast<unsigned>(getpid()));
    std::uniform_int_distribution<int> pick(10000, first_ephemeral - 1);
    for (int attempt = 0; attempt < 100; ++attempt) {
      int port = pick(rng);
      if (BindsNow(&port)) return port;
    }
  }
  int port = 0;
  if (!BindsNow(&port)) throw std::runtime_error("launch: cannot find a free port");
  return port;
}

std::vector<ProcessSpec> LocalJobProcesses(const LocalJob& job) {
  if (job.command.empty()) throw std::invalid_argument("launch: no program given");
  if (job.num_servers < 1) throw std::invalid_argument("launch: --servers must be at least 1");
  if (job.num_workers < 1) throw std::invalid_argument("launch: --workers must be at least 1");
  std::map<std::string, std::string> common = job.env;
  if (job.secure && common.count("PS_JOB_SECRET") == 0 && std::getenv("PS_JOB_SECRET") == nullptr) {
    common["PS_JOB_SECRET"] = RandomSecret();
  }
  common["DMLC_NUM_SERVER"] = std::to_string(job.num_servers);
  common["DMLC_NUM_WORKER"] = std::to_string(job.num_workers);
  common["DMLC_PS_ROOT_URI"] = "127.0.0.1";
  common["DMLC_PS_ROOT_PORT"] = std::to_string(FindFreePort());

  std::vector<ProcessSpec> processes;
  auto add = [&](const std::string& role, int rank) {
    ProcessSpec p{rank < 0 ? role : role + " " + std::to_string(rank), job.command, common};
    p.env["DMLC_ROLE"] = role;
    if (rank >= 0) p.env["LIBRA_RANK"] = std::to_string(rank);
    processes.push_back(p);
  };
  add("scheduler", -1);
  for (int r = 0; r < job.num_servers; ++r) add("server", r);
  for (int r = 0; r < job.num_workers; ++r) add("worker", r);
  return processes;
}

int RunProcesses(const std::vector<ProcessSpec>& processes, double timeout_s) {
  RunOptions options;
  options.timeout_s = timeout_s;
  return RunProcesses(processes, options, nullptr);
}

int RunProcesses(const std::vector<ProcessSpec>& processes, const RunOptions& options,
                 std::vector<ProcessUsage>* usage) {
  const double timeout_s = options.timeout_s;
  std::ostream& output = options.output ? *options.output : std::cout;
  g_interrupted = 0;
  struct sigaction action {};
  action.sa_handler = OnInterrupt;
  struct sigaction old_int, old_term;
  sigaction(SIGINT, &action, &old_int);
  sigaction(SIGTERM, &action, &old_term);

  std::vector<Child> children;
  for (const ProcessSpec& spec : processes) {
    Child c;
    c.spec = &spec;
    c.output = &output;
    c.usage.name = spec.name;
    c.started = std::chrono::steady_clock::now();
    c.pid = Spawn(spec, &c.out_fd);
    children.push_back(std::move(c));
  }

  auto start = std::chrono::steady_clock::now();
  int result = 0;
  std::string reason;
  while (true) {
    std::vector<pollfd> fds;
    for (Child& c : children) {
      if (c.out_fd >= 0) fds.push_back({c.out_fd, POLLIN, 0});
    }
    poll(fds.data(), fds.size(), 100);
    for (Child& c : children) Drain(c, false);
    Reap(children);

    bool any_running = false;
    for (Child& c : children) {
      any_running |= c.running;
      if (!c.running && c.status != 0 && result == 0) {
        result = c.status;
        reason = c.spec->name + " exited with status " + std::to_string(c.status);
      }
    }
    double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (result == 0 && timeout_s > 0 && elapsed > timeout_s) {
      result = 124;
      reason = "timed out after " + std::to_string(static_cast<int>(timeout_s)) + " s";
    }
    if (result == 0 && g_interrupted) {
      result = 130;
      reason = "interrupted";
    }
    if (result != 0 || !any_running) break;
  }
  if (result != 0) {
    bool others = false;
    for (Child& c : children) others |= c.running;
    std::cerr << "launch: " << reason << (others ? "; stopping the other processes" : "")
              << std::endl;
    StopAll(children);
  }
  // Remaining output; a process that left a descendant holding the pipe open
  // gets a short grace period, not a hang.
  auto drain_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  for (Child& c : children) {
    while (c.out_fd >= 0 && std::chrono::steady_clock::now() < drain_deadline) {
      pollfd fd{c.out_fd, POLLIN, 0};
      poll(&fd, 1, 50);
      Drain(c, false);
    }
    Drain(c, true);
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  if (usage) {
    usage->clear();
    for (const Child& c : children) usage->push_back(c.usage);
  }
  return result;
}

double CpuSecondsOf(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The command name, in parentheses, may hold spaces: fields count from
  // the last ')'.
  const size_t close = text.rfind(')');
  if (close == std::string::npos || close + 2 > text.size()) return 0;
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14 || i == 15) ticks += std::strtod(field.c_str(), nullptr);  // utime, stime
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

}  // namespace libra
