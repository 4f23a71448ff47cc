#include "hotpath/node/engine_loop.h"

#include <pthread.h>

#include "hotpath/node/engine_socket.h"

namespace libra::hotpath {
namespace {

// Datagrams per recvmmsg and per sendmmsg.
constexpr std::size_t kBatch = 64;
// Receive batches per turn of the loop, so that a flood of datagrams cannot
// starve the timers.
constexpr int kBatchesPerTurn = 16;

}  // namespace

EngineLoop::EngineLoop(const EngineLoopOptions& options)
    : options_(options),
      clock_(options.clock != nullptr ? *options.clock : SteadyEngineClock()),
      socket_(options.socket != nullptr
                  ? options.socket
                  : std::make_shared<net::UdpSocket>(options.local, EngineSocketOptions())),
      coalescing_(socket_->EnableReceiveCoalescing()),
      batch_(kBatch, coalescing_),
      out_(socket_->fd(), kBatch, options.segmentation) {}

EngineLoop::~EngineLoop() { Stop(); }

void EngineLoop::Start(EngineHandler& handler, const char* thread_name) {
  thread_ = std::thread([this, &handler, thread_name] {
    pthread_setname_np(pthread_self(), thread_name);
    Run(handler);
  });
}

void EngineLoop::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  waker_.Wake();
  if (thread_.joinable()) thread_.join();
}

void EngineLoop::Run(EngineHandler& handler) {
  Clock::time_point deadline = clock_.Now();
  std::vector<std::function<void()>> to_run;
  for (;;) {
    // The deadline is in the engine's time; the wait is in the steady clock's.
    waker_.WaitUntil(socket_->fd(), Clock::now() + (deadline - clock_.Now()));
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      Receive(handler);
      deadline = handler.Progress(clock_.Now(), out_);
      out_.Flush();
      counters_.packets_sent = out_.packets_sent();
      counters_.bytes_sent = out_.bytes_sent();
      counters_.send_errors = out_.refused();
      to_run.swap(notices_);
    }
    for (auto& notice : to_run) notice();
    to_run.clear();
  }
}

void EngineLoop::Receive(EngineHandler& handler) {
  for (int turn = 0; turn < kBatchesPerTurn; ++turn) {
    const std::size_t n = batch_.Receive(socket_->fd());
    for (std::size_t i = 0; i < n; ++i) {
      const std::span<const std::uint8_t> bytes = batch_.payload(i);
      ++counters_.packets_received;
      counters_.bytes_received += bytes.size();
      wire::Message message;
      if (wire::Decode(bytes, &message) != wire::DecodeError::kNone) {
        ++counters_.malformed_packets;
        continue;
      }
      if (message.header.job_id != options_.job_id) {
        ++counters_.ignored_packets;
        continue;
      }
      const UdpEndpoint from = batch_.source(i);
      if (from != options_.switch_address) {
        ++counters_.foreign_packets;
        continue;
      }
      handler.OnMessage(message, bytes, from);
    }
    if (n < kBatch) break;
  }
}

}  // namespace libra::hotpath
