#include "bench/traffic_replay.h"

#include <poll.h>

#include <atomic>
#include <barrier>
#include <chrono>
#include <stdexcept>
#include <thread>

namespace libra::bench {
namespace {

using Clock = std::chrono::steady_clock;

// One worker's packets of one traffic epoch, back to back.
struct WorkerEpoch {
  std::vector<std::uint8_t> bytes;
  std::vector<std::size_t> begin;  // packet k is bytes[begin[k], begin[k + 1])
  std::size_t size() const { return begin.size() - 1; }
  std::span<std::uint8_t> packet(std::size_t k) {
    return {bytes.data() + begin[k], begin[k + 1] - begin[k]};
  }
};

// What one worker's sender holds across the run.
struct WorkerState {
  net::UdpSocket* socket = nullptr;
  std::vector<WorkerEpoch> epochs;  // per traffic epoch
  std::unique_ptr<net::SendQueue> send;
  std::unique_ptr<net::ReceiveBatch> receive;
  std::vector<bool> acked;
  std::size_t base = 0;  // lowest un-ACKed packet
  std::size_t next = 0;  // next packet to send
};

std::vector<WorkerState> SplitByWorker(const dataplane::BenchTraffic& traffic,
                                       const std::vector<net::UdpSocket*>& sockets) {
  if (traffic.epochs.empty() || sockets.size() != static_cast<std::size_t>(traffic.workers)) {
    throw std::invalid_argument("replay: no epochs, or not one socket per worker");
  }
  std::vector<WorkerState> workers(sockets.size());
  for (std::size_t w = 0; w < workers.size(); ++w) {
    workers[w].socket = sockets[w];
    workers[w].epochs.resize(traffic.epochs.size());
  }
  std::uint64_t packets = 0;
  for (std::size_t e = 0; e < traffic.epochs.size(); ++e) {
    for (const dataplane::BenchPacket& p : traffic.epochs[e]) {
      wire::Header header;
      if (p.worker >= workers.size() ||
          wire::DecodeHeader(p.bytes, &header) != wire::DecodeError::kNone ||
          header.type != wire::MessageType::kData) {
        throw std::invalid_argument("replay: a packet that is no DATA of a known worker");
      }
      WorkerEpoch& mine = workers[p.worker].epochs[e];
      if (header.seq != mine.begin.size()) {
        throw std::invalid_argument("replay: a worker's seqs must be 0, 1, 2, ... in an epoch");
      }
      mine.begin.push_back(mine.bytes.size());
      mine.bytes.insert(mine.bytes.end(), p.bytes.begin(), p.bytes.end());
      ++packets;
    }
  }
  for (WorkerState& w : workers) {
    for (WorkerEpoch& e : w.epochs) e.begin.push_back(e.bytes.size());
  }
  if (packets == 0) throw std::invalid_argument("replay: the traffic has no packets");
  return workers;
}

}  // namespace

ReplayTotals ReplayTraffic(const dataplane::BenchTraffic& traffic,
                           const std::vector<net::UdpSocket*>& worker_sockets,
                           const UdpEndpoint& to, const ReplayOptions& options) {
  if (options.window < 1 || options.threads < 1 || options.seconds <= 0) {
    throw std::invalid_argument("replay: window, threads and seconds must be positive");
  }
  std::vector<WorkerState> workers = SplitByWorker(traffic, worker_sockets);
  const auto window = static_cast<std::size_t>(options.window);
  for (WorkerState& w : workers) {
    // A window leaves as segmented sends and the ACKs come back coalesced,
    // as a tuned worker does it, so that the senders cost little next to
    // the switch they measure.
    w.send = std::make_unique<net::SendQueue>(w.socket->fd(), window, /*segmentation=*/true);
    w.receive = std::make_unique<net::ReceiveBatch>(window, w.socket->EnableReceiveCoalescing());
  }
  const int threads = std::min<int>(options.threads, static_cast<int>(workers.size()));

  std::atomic<bool> stop{false}, stalled{false};
  std::atomic<std::uint64_t> acked_total{0}, sent_total{0};
  std::uint64_t epochs = 0;
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(options.seconds));
  // The last thread to finish an epoch decides, for all, whether to go on.
  std::barrier epoch_done(threads, [&]() noexcept {
    ++epochs;
    if (Clock::now() >= deadline || stalled.load()) stop = true;
  });
  const auto resend_after = std::chrono::milliseconds(options.resend_after_ms);
  const auto give_up_after = std::chrono::milliseconds(options.give_up_after_ms);

  auto run_thread = [&](int t) {
    std::vector<WorkerState*> mine;
    for (std::size_t w = t; w < workers.size(); w += threads) mine.push_back(&workers[w]);
    std::vector<pollfd> fds;
    for (WorkerState* w : mine) fds.push_back({w->socket->fd(), POLLIN, 0});
    std::array<std::uint8_t, wire::kMaxMessageBytes> resend{};
    std::uint64_t acked = 0, sent = 0;
    for (std::uint32_t round = 0; !stop.load(); ++round) {
      std::size_t remaining = 0;
      for (WorkerState* w : mine) {
        WorkerEpoch& e = w->epochs[round % w->epochs.size()];
        for (std::size_t k = 0; k < e.size(); ++k) wire::SetEpoch(e.packet(k).data(), round);
        w->acked.assign(e.size(), false);
        w->base = w->next = 0;
        remaining += e.size();
      }
      auto last_progress = Clock::now(), last_ack = last_progress;
      while (remaining > 0 && !stalled.load()) {
        for (WorkerState* w : mine) {
          WorkerEpoch& e = w->epochs[round % w->epochs.size()];
          for (; w->next < e.size() && w->next < w->base + window; ++w->next, ++sent) {
            w->send->PushView(e.packet(w->next), to);
          }
          w->send->Flush();
        }
        ::poll(fds.data(), fds.size(), options.resend_after_ms);
        bool progress = false;
        for (std::size_t i = 0; i < mine.size(); ++i) {
          if (!(fds[i].revents & POLLIN)) continue;
          WorkerState& w = *mine[i];
          const std::size_t n = w.receive->Receive(w.socket->fd());
          for (std::size_t j = 0; j < n; ++j) {
            wire::Header ack;
            if (wire::DecodeHeader(w.receive->payload(j), &ack) != wire::DecodeError::kNone ||
                ack.type != wire::MessageType::kAck || ack.epoch != round || ack.seq < w.base ||
                ack.seq >= w.next || w.acked[ack.seq]) {
              continue;
            }
            w.acked[ack.seq] = true;
            ++acked;
            --remaining;
            progress = true;
          }
          while (w.base < w.next && w.acked[w.base]) ++w.base;
        }
        const auto now = Clock::now();
        if (progress) {
          last_progress = last_ack = now;
        } else if (now - last_ack > give_up_after) {
          stalled = true;
        } else if (now - last_progress > resend_after) {
          for (WorkerState* w : mine) {
            WorkerEpoch& e = w->epochs[round % w->epochs.size()];
            for (std::size_t k = w->base; k < w->next; ++k) {
              if (w->acked[k]) continue;
              const auto p = e.packet(k);
              std::copy(p.begin(), p.end(), resend.begin());
              wire::SetFlags(resend.data(), wire::kFlagRetransmission);
              w->send->Push({resend.data(), p.size()}, to);
              ++sent;
            }
            w->send->Flush();
          }
          last_progress = now;
        }
      }
      epoch_done.arrive_and_wait();
    }
    acked_total += acked;
    sent_total += sent;
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(run_thread, t);
  run_thread(0);
  for (std::thread& t : pool) t.join();

  ReplayTotals totals;
  totals.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  totals.packets_acked = acked_total.load();
  totals.packets_sent = sent_total.load();
  totals.epochs = epochs;
  totals.stalled = stalled.load();
  return totals;
}

}  // namespace libra::bench
