// A blocking multi-producer, multi-consumer queue.
#pragma once

#include <condition_variable>
#include <mutex>
#include <queue>

namespace ps {

template <typename T>
class ThreadsafeQueue {
 public:
  void Push(T value) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      queue_.push(std::move(value));
    }
    cond_.notify_one();
  }

  void WaitAndPop(T* value) {
    std::unique_lock<std::mutex> lock(mu_);
    cond_.wait(lock, [this] { return !queue_.empty(); });
    *value = std::move(queue_.front());
    queue_.pop();
  }

 private:
  std::mutex mu_;
  std::condition_variable cond_;
  std::queue<T> queue_;
};

}  // namespace ps
