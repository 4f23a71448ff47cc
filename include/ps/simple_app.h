// SimpleApp: request/response of an integer head and a string body between
// nodes. KVWorker and KVServer build on it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>

#include "ps/internal/customer.h"
#include "ps/internal/message.h"
#include "ps/internal/postoffice.h"

namespace ps {

// A received request or response.
struct SimpleData {
  int head;
  std::string body;
  int sender;
  int timestamp;
  int customer_id;
};

class SimpleApp {
 public:
  // The handler of requests and responses. A request that arrives before the
  // application has set its request handle waits for it (a program sets its
  // handle after the constructor, while requests may already be arriving).
  // An application that never sets one gets the default, which answers with
  // an empty body, from the moment the node calls Finalize or the app is
  // destroyed; until then its requests wait. A response is ignored by default.
  using Handle = std::function<void(const SimpleData& recved, SimpleApp* app)>;

  // On servers and the scheduler messages reach a customer whose id is its
  // app id; SimpleApp(app_id) is that customer on every node.
  explicit SimpleApp(int app_id) : SimpleApp(app_id, app_id) {}
  SimpleApp(int app_id, int customer_id) : SimpleApp() {
    obj_ = new Customer(app_id, customer_id, [this](const Message& m) { Process(m); });
    obj_->set_finalize_handle([this] { UseDefaultRequestHandle(); });
  }
  virtual ~SimpleApp() {
    UseDefaultRequestHandle();
    delete obj_;
    obj_ = nullptr;
  }

  // Sends a request to a node or group; returns its timestamp for Wait.
  virtual int Request(int req_head, const std::string& req_body, int recv_id) {
    int ts = obj_->NewRequest(recv_id);
    SendRequest(req_head, req_body, recv_id, ts);
    return ts;
  }

  // Blocks until every node the request went to has responded.
  virtual void Wait(int timestamp) { obj_->WaitRequest(timestamp); }

  virtual void Response(const SimpleData& recv_req, const std::string& res_body = "") {
    Message msg;
    msg.meta.head = recv_req.head;
    msg.meta.body = res_body;
    msg.meta.timestamp = recv_req.timestamp;
    msg.meta.request = false;
    msg.meta.simple_app = true;
    // Not obj_->app_id(): a handle may answer a request (one parked before
    // the app existed) while the constructor is still creating obj_.
    msg.meta.app_id = app_id_ != Meta::kEmpty ? app_id_.load() : obj_->app_id();
    msg.meta.customer_id = recv_req.customer_id;
    msg.meta.recver = recv_req.sender;
    Postoffice::Get()->van()->Send(msg);
  }

  // Handles may be set while messages arrive (the customer's thread is
  // already running), hence the lock.
  virtual void set_request_handle(const Handle& request_handle) {
    CHECK(request_handle) << "invalid request handle";
    {
      std::lock_guard<std::mutex> lock(handle_mu_);
      request_handle_ = request_handle;
      request_handle_set_ = true;
    }
    handle_set_.notify_all();
  }
  virtual void set_response_handle(const Handle& response_handle) {
    CHECK(response_handle) << "invalid response handle";
    std::lock_guard<std::mutex> lock(handle_mu_);
    response_handle_ = response_handle;
  }

  virtual Customer* get_customer() { return obj_; }

 protected:
  // Sends a request stamped `timestamp` to every node of `recv_id`; returns
  // how many it went to. Request stamps it with a tracked request's; a
  // subclass may send one that nobody answers (Meta::kEmpty).
  int SendRequest(int head, const std::string& body, int recv_id, int timestamp) {
    Message msg;
    msg.meta.head = head;
    msg.meta.body = body;
    msg.meta.timestamp = timestamp;
    msg.meta.request = true;
    msg.meta.simple_app = true;
    msg.meta.app_id = obj_->app_id();
    msg.meta.customer_id = obj_->customer_id();
    int sent = 0;
    for (int recver : Postoffice::Get()->GetNodeIDs(recv_id)) {
      msg.meta.recver = recver;
      Postoffice::Get()->van()->Send(msg);
      ++sent;
    }
    return sent;
  }

  // Subclasses create obj_ themselves (and call obj_->set_finalize_handle as
  // above if they keep SimpleApp's request handling).
  SimpleApp() {
    request_handle_ = [](const SimpleData& recved, SimpleApp* app) { app->Response(recved); };
    response_handle_ = [](const SimpleData&, SimpleApp*) {};
  }

  virtual void Process(const Message& msg) {
    app_id_ = msg.meta.app_id;  // the customer's: messages reach it by app id
    SimpleData recv{msg.meta.head, msg.meta.body, msg.meta.sender, msg.meta.timestamp,
                    msg.meta.customer_id};
    // Called under the lock, not copied: a handle may carry state.
    std::unique_lock<std::mutex> lock(handle_mu_);
    if (msg.meta.request) {
      handle_set_.wait(lock, [this] { return request_handle_set_; });
      request_handle_(recv, this);
    } else {
      response_handle_(recv, this);
    }
  }

  // Requests stop waiting for the application's handle: the one set so far
  // (the default if none) answers them. Finalize and the destructors call it.
  void UseDefaultRequestHandle() {
    {
      std::lock_guard<std::mutex> lock(handle_mu_);
      request_handle_set_ = true;
    }
    handle_set_.notify_all();
  }

  Customer* obj_ = nullptr;

 private:
  std::atomic<int> app_id_{Meta::kEmpty};  // of the messages this app received
  std::mutex handle_mu_;
  std::condition_variable handle_set_;
  bool request_handle_set_ = false;
  Handle request_handle_;
  Handle response_handle_;
};

}  // namespace ps
