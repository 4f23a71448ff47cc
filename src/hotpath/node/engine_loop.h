// The I/O thread of a hot-path engine (HotSender on a worker, HotCollector
// on a server), written once: it owns the engine's UDP socket, the waker that
// API calls interrupt its wait with, the receive and send batches, the
// counters every engine keeps of its datagrams, and the engine's one lock.
//
// One turn of the loop: wait on the socket until the engine's deadline (in
// the engine's clock) or a wake-up; take the lock; receive up to
// kBatchesPerTurn batches, count and decode each datagram and hand what is
// this job's and comes from the switch to the engine (EngineHandler::
// OnMessage); let the engine do its timer work (Progress) into the send
// queue and say when the next turn is due; flush the queue; drop the lock;
// run the notices (callbacks) queued during the turn.
//
// Lock discipline: mutex() is the engine's only lock. The I/O thread holds it
// for the whole of a turn's protocol work, from the first datagram to the
// flush, and never while it waits or runs notices; API calls on any thread
// take it briefly and call Wake() after dropping it. Nothing that can block,
// nor any caller's callback, runs under it: callbacks go through Notify and
// run after the turn, unlocked, in the order they were queued.
//
// Who may answer: every message a host takes (ACK, READY, RESULT, REPLICA,
// PROBE_REPLY) is the switch's, so a datagram of this job whose source is not
// the switch's data address the engine was configured with is dropped and
// counted (foreign_packets) before the engine sees it. A forged source address
// still passes: the switch's answers carry no authentication but an UPDATE's
// MAC (docs/reliability.md).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "hotpath/node/engine_clock.h"
#include "net/udp_socket.h"
#include "net/waker.h"
#include "wire/switch_job.h"
#include "wire/wire.h"

namespace libra::hotpath {

struct EngineLoopOptions {
  std::uint32_t job_id = 0;
  // Where the socket binds (port 0: the kernel picks one), unless `socket`
  // is given.
  UdpEndpoint local{0x7f000001, 0};
  // The switch's data address: the only source messages are taken from.
  UdpEndpoint switch_address;
  // What the timers and round-trip samples read; null: the steady clock. It
  // must outlive the loop.
  const EngineClock* clock = nullptr;
  // A socket bound already (made with EngineSocketOptions), which the loop
  // uses instead of binding its own: the node's reserved one, held from the
  // JOIN that names its address on, so that no other process can take the
  // port between the JOIN and the engine's start.
  std::shared_ptr<net::UdpSocket> socket;
  // Runs of same-sized datagrams to the switch leave as one segmented send
  // (UDP GSO, net::SendQueue), and the switch's runs arrive as one coalesced
  // message (UDP GRO): the kernel's work per datagram, most of a datagram's
  // cost on loopback, is done once per run. Off where something between the
  // socket and the wire must see each datagram apart (the emulated cluster's
  // loss rule drops a segmented send whole).
  bool segmentation = true;
};

// The datagrams of one engine, as every engine reports them.
struct EngineLoopCounters {
  std::uint64_t packets_sent = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t send_errors = 0;  // datagrams the kernel refused
  std::uint64_t packets_received = 0;
  std::uint64_t bytes_received = 0;
  std::uint64_t malformed_packets = 0;  // not a wire message (wire::Decode failed)
  // Another job's; the engine adds its own reasons (another node, an
  // unexpected type or cell).
  std::uint64_t ignored_packets = 0;
  // This job's, from an address that is not the switch's.
  std::uint64_t foreign_packets = 0;
};

// What an engine does with the loop's turns. Both calls run on the I/O thread
// with the loop's mutex held.
class EngineHandler {
 public:
  using Clock = EngineClock::Clock;
  virtual ~EngineHandler() = default;
  // A datagram of this job from the switch, decoded; `bytes` is the whole
  // datagram (valid only during the call).
  virtual void OnMessage(const wire::Message& message, std::span<const std::uint8_t> bytes,
                         const UdpEndpoint& from) = 0;
  // The turn's timer work at `now` (the engine clock, read after the turn's
  // datagrams were handled): queue what is due in `out`, which the loop
  // flushes when this returns (a view pushed into it must stay valid until
  // then). Returns when the next turn is due at the latest.
  virtual Clock::time_point Progress(Clock::time_point now, net::SendQueue& out) = 0;
};

class EngineLoop {
 public:
  using Clock = EngineClock::Clock;

  // Binds the socket (std::system_error when it cannot); the thread starts
  // with Start.
  explicit EngineLoop(const EngineLoopOptions& options);
  // Stops the thread if it still runs.
  ~EngineLoop();
  EngineLoop(const EngineLoop&) = delete;
  EngineLoop& operator=(const EngineLoop&) = delete;

  // Starts the I/O thread, named `thread_name` (at most 15 characters, for
  // top -H and perf), which calls `handler` from then until Stop. Call once
  // the handler's state exists.
  void Start(EngineHandler& handler, const char* thread_name);
  // Sets stopping() and joins the thread; notices not run yet are dropped.
  // Call without the lock.
  void Stop();

  // The engine's lock (see the discipline above).
  std::mutex& mutex() const { return mutex_; }
  // Interrupts the thread's wait, so that a turn runs now (any thread, best
  // without the lock).
  void Wake() { waker_.Wake(); }
  // With the lock held: `notice` runs after this turn, without the lock.
  void Notify(std::function<void()> notice) { notices_.push_back(std::move(notice)); }
  // With the lock held: Stop was called.
  bool stopping() const { return stopping_; }
  // With the lock held.
  const EngineLoopCounters& counters() const { return counters_; }
  // With the lock held, from OnMessage: the engine's own reasons to ignore
  // a message of this job.
  void CountIgnored() { ++counters_.ignored_packets; }

  const EngineClock& clock() const { return clock_; }
  UdpEndpoint local() const { return socket_->local(); }
  int receive_buffer_bytes() const { return socket_->ReceiveBufferBytes(); }

 private:
  void Run(EngineHandler& handler);
  void Receive(EngineHandler& handler);

  const EngineLoopOptions options_;
  const EngineClock& clock_;
  const std::shared_ptr<net::UdpSocket> socket_;
  net::Waker waker_;
  const bool coalescing_;  // the kernel passes the switch's segmented sends as one message
  net::ReceiveBatch batch_;
  net::SendQueue out_;

  mutable std::mutex mutex_;
  // Under mutex_.
  bool stopping_ = false;
  EngineLoopCounters counters_;
  std::vector<std::function<void()>> notices_;

  std::thread thread_;
};

// Copies the loop's counters into an engine's counters of the same names.
template <typename Counters>
void CopyLoopCounters(const EngineLoopCounters& from, Counters& to) {
  to.packets_sent = from.packets_sent;
  to.bytes_sent = from.bytes_sent;
  to.send_errors = from.send_errors;
  to.packets_received = from.packets_received;
  to.bytes_received = from.bytes_received;
  to.malformed_packets = from.malformed_packets;
  to.ignored_packets = from.ignored_packets;
  to.foreign_packets = from.foreign_packets;
}

}  // namespace libra::hotpath
