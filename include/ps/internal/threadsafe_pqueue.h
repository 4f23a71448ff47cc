// A blocking queue of messages that pops the highest Meta::priority first,
// and messages of equal priority in the order they were pushed.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <queue>
#include <utility>
#include <vector>

#include "ps/base.h"
#include "ps/internal/message.h"

namespace ps {

class ThreadsafePQueue {
 public:
  void Push(Message value) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      queue_.push(Entry{std::move(value), next_seq_++});
    }
    cond_.notify_one();
  }

  // Blocks until a message is queued, then takes the first in priority order.
  void WaitAndPop(Message* value) {
    std::unique_lock<std::mutex> lock(mu_);
    cond_.wait(lock, [this] { return !queue_.empty(); });
    *value = queue_.top().msg;  // shares the data arrays: no copy of them
    queue_.pop();
  }

 private:
  struct Entry {
    Message msg;
    uint64_t seq;
  };
  // priority_queue pops its largest element: higher priority, then older.
  struct Later {
    bool operator()(const Entry& a, const Entry& b) const {
      if (a.msg.meta.priority != b.msg.meta.priority) {
        return a.msg.meta.priority < b.msg.meta.priority;
      }
      return a.seq > b.seq;
    }
  };
  std::mutex mu_;
  std::condition_variable cond_;
  std::priority_queue<Entry, std::vector<Entry>, Later> queue_;
  uint64_t next_seq_ = 0;
};

}  // namespace ps
