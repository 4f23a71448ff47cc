#include "ps/internal/customer.h"

#include <pthread.h>

#include "ps/internal/postoffice.h"

namespace ps {

Customer::Customer(int app_id, int customer_id, const RecvHandle& recv_handle)
    : app_id_(app_id), customer_id_(customer_id), recv_handle_(recv_handle) {
  Postoffice::Get()->AddCustomer(this);
  recv_thread_ = std::thread(&Customer::Receiving, this);
}

Customer::~Customer() {
  Postoffice::Get()->RemoveCustomer(this);
  Message stop;
  stop.meta.control.cmd = Control::TERMINATE;
  queue_.Push(stop);
  recv_thread_.join();
}

int Customer::NewRequest(int recver, int extra_parts) {
  int expected = static_cast<int>(Postoffice::Get()->GetNodeIDs(recver).size()) + extra_parts;
  std::lock_guard<std::mutex> lock(tracker_mu_);
  tracker_.push_back({expected, 0});
  return static_cast<int>(tracker_.size()) - 1;
}

void Customer::WaitRequest(int timestamp) {
  std::unique_lock<std::mutex> lock(tracker_mu_);
  tracker_cond_.wait(lock, [this, timestamp] {
    const Progress& p = tracker_[timestamp];
    return p.received >= p.expected;
  });
}

int Customer::NumResponse(int timestamp) {
  std::lock_guard<std::mutex> lock(tracker_mu_);
  return tracker_[timestamp].received;
}

void Customer::AddResponse(int timestamp, int num) {
  {
    std::lock_guard<std::mutex> lock(tracker_mu_);
    tracker_[timestamp].received += num;
  }
  tracker_cond_.notify_all();
}

void Customer::set_finalize_handle(const std::function<void()>& handle) {
  std::lock_guard<std::mutex> lock(finalize_mu_);
  finalize_handle_ = handle;
}

void Customer::OnFinalize() {
  std::function<void()> handle;
  {
    std::lock_guard<std::mutex> lock(finalize_mu_);
    handle = finalize_handle_;
  }
  if (handle) handle();
}

void Customer::Receiving() {
  // Named for top -H and perf (at most 15 characters).
  pthread_setname_np(pthread_self(), "ps-customer");
  while (true) {
    Message msg;
    queue_.WaitAndPop(&msg);
    if (msg.meta.control.cmd == Control::TERMINATE) break;
    if (!msg.meta.request) {
      std::lock_guard<std::mutex> lock(tracker_mu_);
      if (msg.meta.timestamp < 0 || msg.meta.timestamp >= static_cast<int>(tracker_.size())) {
        LOG(WARNING) << "dropped a response to unknown request " << msg.meta.timestamp;
        continue;
      }
    }
    recv_handle_(msg);
    if (!msg.meta.request) AddResponse(msg.meta.timestamp);
  }
}

}  // namespace ps
