// A Customer is one application object (KVWorker, KVServer, SimpleApp) as
// the network sees it: messages addressed to its (app_id, customer_id) are
// queued to it and handled in order on its own thread, and it tracks how many
// responses each of its requests still waits for.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "ps/internal/message.h"
#include "ps/internal/threadsafe_queue.h"

namespace ps {

class Customer {
 public:
  using RecvHandle = std::function<void(const Message& recved)>;

  // Registers with the Postoffice; `recv_handle` runs on this customer's
  // thread for every message it receives.
  Customer(int app_id, int customer_id, const RecvHandle& recv_handle);
  ~Customer();

  int app_id() const { return app_id_; }
  int customer_id() const { return customer_id_; }

  // A new request to node or group `recver`: returns its timestamp. It is
  // complete when every node of the group has responded (AddResponse counts
  // slices that were not sent). `extra_parts` more completions are expected
  // from elsewhere (Libra's hot path).
  int NewRequest(int recver, int extra_parts = 0);
  void WaitRequest(int timestamp);
  int NumResponse(int timestamp);
  void AddResponse(int timestamp, int num = 1);

  // Called by the Van's receiving thread.
  void Accept(const Message& recved) { queue_.Push(recved); }

  // `handle` runs when this node begins Postoffice::Finalize: SimpleApp's
  // requests that still wait for the application's handle take the default.
  void set_finalize_handle(const std::function<void()>& handle);
  void OnFinalize();

 private:
  void Receiving();

  int app_id_;
  int customer_id_;
  RecvHandle recv_handle_;
  std::mutex finalize_mu_;
  std::function<void()> finalize_handle_;
  ThreadsafeQueue<Message> queue_;
  std::thread recv_thread_;

  std::mutex tracker_mu_;
  std::condition_variable tracker_cond_;
  struct Progress {
    int expected;
    int received;
  };
  std::vector<Progress> tracker_;  // indexed by timestamp
};

}  // namespace ps
