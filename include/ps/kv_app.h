// Key-value communication between workers and servers.
//
// A worker pushes (key, value) lists to the servers and pulls values back.
// Keys of one request must be sorted ascending and unique; the request is
// sliced by the servers' key ranges (GetServerKeyRanges) so each server gets
// the keys it owns. Values are `lens[i]` long per key when `lens` is given,
// otherwise vals.size() / keys.size() each. Every call is asynchronous and
// returns a timestamp for Wait(); a callback, if given, runs when the request
// has completed (for a pull: after the values are in place).
//
// A server handles each request in a request handle and answers it with
// Response(); KVServerDefaultHandle sums pushed values per key.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ps/base.h"
#include "ps/internal/hot_path_hooks.h"
#include "ps/internal/merge_by_key.h"
#include "ps/internal/slice_of_keys.h"
#include "ps/simple_app.h"

namespace ps {

template <typename Val>
struct KVPairs {
  SArray<Key> keys;
  SArray<Val> vals;
  SArray<int> lens;  // empty, or one length per key
  int priority = 0;
};

// What a server's request handle knows about a request.
struct KVMeta {
  int cmd;          // the application's command, passed through
  bool push;        // carries values
  bool pull;        // wants values back
  int sender;       // node id of the worker
  int timestamp;    // request id, echoed in the response
  int customer_id;  // the worker's customer
  // Libra: how many workers' gradients this push sums. An ordinary push is 1;
  // a push of hot keys aggregated by the switch carries all N workers at once.
  int num_merged = 1;
  // Libra: the push comes from the switch path (one aggregated push per epoch
  // of the hot keys this server owns), not from one worker; sender is -1.
  bool from_switch = false;
};

template <typename Val>
class KVWorker : public SimpleApp {
 public:
  using SimpleApp::obj_;
  using Callback = std::function<void()>;
  // One (non-empty?, slice) per server.
  using SlicedKVs = std::vector<std::pair<bool, KVPairs<Val>>>;
  using Slicer = std::function<void(const KVPairs<Val>& send, const std::vector<Range>& ranges,
                                    SlicedKVs* sliced)>;

  // customer_id distinguishes several KVWorkers of one app in one process.
  explicit KVWorker(int app_id, int customer_id = 0) : SimpleApp() {
    slicer_ = [this](const KVPairs<Val>& send, const std::vector<Range>& ranges,
                     SlicedKVs* sliced) { DefaultSlicer(send, ranges, sliced); };
    obj_ = new Customer(app_id, customer_id, [this](const Message& m) { Process(m); });
    obj_->set_finalize_handle([this] { UseDefaultRequestHandle(); });
    // Libra: the hot path serves the float workers of app 0: customer 0, and
    // every customer that is a worker of its own (docs/hotpath.md).
    if (std::is_same<Val, float>::value && app_id == 0) {
      hot_ = hot_path_hooks::CreateWorker(
          customer_id, [this](const SArray<Key>& keys) { return ServerOf(keys); });
    }
  }

  virtual ~KVWorker() {
    UseDefaultRequestHandle();  // the customer's thread must not wait on it
    hot_.reset();               // waits for hot parts in flight
    delete obj_;
    obj_ = nullptr;
  }

  // Copies keys/vals/lens, then pushes them.
  int Push(const std::vector<Key>& keys, const std::vector<Val>& vals,
           const std::vector<int>& lens = {}, int cmd = 0, const Callback& cb = nullptr,
           int priority = 0) {
    return ZPush(SArray<Key>(keys), SArray<Val>(vals), SArray<int>(lens), cmd, cb, priority);
  }

  // Pulls the values of `keys` into *vals (resized if empty, otherwise it must
  // already have the right size); *lens receives the length per key if given.
  int Pull(const std::vector<Key>& keys, std::vector<Val>* vals, std::vector<int>* lens = nullptr,
           int cmd = 0, const Callback& cb = nullptr, int priority = 0) {
    SArray<Key> skeys(keys);
    int ts = AddPullCallback(skeys, vals, lens, cmd, cb);
    Send(ts, false, true, cmd, MakeKVPairs(skeys, SArray<Val>(), SArray<int>(), priority));
    return ts;
  }

  // Pushes vals and pulls the updated values into *outs in one round trip.
  int PushPull(const std::vector<Key>& keys, const std::vector<Val>& vals, std::vector<Val>* outs,
               std::vector<int>* lens = nullptr, int cmd = 0, const Callback& cb = nullptr,
               int priority = 0) {
    CHECK_NOTNULL(outs);
    if (outs->empty()) {
      outs->resize(vals.size());
    } else {
      CHECK_EQ(vals.size(), outs->size());
    }
    SArray<Key> skeys(keys);
    SArray<Val> svals(vals);
    SArray<int> slens;
    if (lens) slens.CopyFrom(lens->data(), lens->size());
    int ts = AddPullCallback(skeys, outs, lens, cmd, cb);
    Send(ts, true, true, cmd, MakeKVPairs(skeys, svals, slens, priority));
    return ts;
  }

  // Blocks until the request `timestamp` has completed.
  void Wait(int timestamp) { obj_->WaitRequest(timestamp); }

  // Zero-copy push: keys, vals and lens are sent without copying, so they
  // must not change until the request completes.
  int ZPush(const SArray<Key>& keys, const SArray<Val>& vals, const SArray<int>& lens = {},
            int cmd = 0, const Callback& cb = nullptr, int priority = 0) {
    int ts = NewRequest();
    AddCallback(ts, cb);
    Send(ts, true, false, cmd, MakeKVPairs(keys, vals, lens, priority));
    return ts;
  }

  // Zero-copy pull: a received array is handed over without copying when one
  // server answers the whole request and *vals is empty.
  int ZPull(const SArray<Key>& keys, SArray<Val>* vals, SArray<int>* lens = nullptr, int cmd = 0,
            const Callback& cb = nullptr, int priority = 0) {
    int ts = AddPullCallback(keys, vals, lens, cmd, cb);
    Send(ts, false, true, cmd, MakeKVPairs(keys, SArray<Val>(), SArray<int>(), priority));
    return ts;
  }

  int ZPushPull(const SArray<Key>& keys, const SArray<Val>& vals, SArray<Val>* outs,
                SArray<int>* lens = nullptr, int cmd = 0, const Callback& cb = nullptr,
                int priority = 0) {
    CHECK_NOTNULL(outs);
    if (outs->empty()) {
      outs->resize(vals.size());
    } else {
      CHECK_EQ(vals.size(), outs->size());
    }
    SArray<int> send_lens;
    if (lens) send_lens = *lens;
    int ts = AddPullCallback(keys, outs, lens, cmd, cb);
    Send(ts, true, true, cmd, MakeKVPairs(keys, vals, send_lens, priority));
    return ts;
  }

  void set_slicer(const Slicer& slicer) {
    CHECK(slicer) << "invalid slicer";
    slicer_ = slicer;
  }

 private:
  // (KVPairs is no aggregate in C++11: it has a default member initializer.)
  static KVPairs<Val> MakeKVPairs(const SArray<Key>& keys, const SArray<Val>& vals,
                                  const SArray<int>& lens, int priority) {
    KVPairs<Val> kvs;
    kvs.keys = keys;
    kvs.vals = vals;
    kvs.lens = lens;
    kvs.priority = priority;
    return kvs;
  }

  // Splits `send` by server key ranges with a binary search per boundary.
  // Keys on a boundary belong to the range that starts there; servers with no
  // keys get an empty, unsent slice.
  void DefaultSlicer(const KVPairs<Val>& send, const std::vector<Range>& ranges,
                     SlicedKVs* sliced) {
    sliced->resize(ranges.size());
    const size_t n = ranges.size();
    std::vector<size_t> pos(n + 1, 0);
    for (size_t i = 0; i < n; ++i) {
      pos[i] = std::lower_bound(send.keys.begin(), send.keys.end(), ranges[i].begin()) -
               send.keys.begin();
    }
    pos[0] = 0;
    pos[n] = send.keys.size();
    CHECK(send.keys.empty() || send.keys.back() < ranges.back().end() ||
          ranges.back().end() == kMaxKey)
        << "key " << send.keys.back() << " is beyond the last server's range";

    // Value offsets: by lens when given, otherwise a fixed length per key.
    size_t k = 0;
    if (send.lens.empty() && !send.keys.empty()) {
      k = send.vals.size() / send.keys.size();
      CHECK_EQ(k * send.keys.size(), send.vals.size())
          << "vals.size() is not a multiple of keys.size()";
    } else if (!send.lens.empty()) {
      CHECK_EQ(send.lens.size(), send.keys.size()) << "need one length per key";
    }
    size_t val_begin = 0;
    for (size_t i = 0; i < n; ++i) {
      bool& nonempty = (*sliced)[i].first;
      KVPairs<Val>& kv = (*sliced)[i].second;
      kv = KVPairs<Val>();
      if (pos[i + 1] <= pos[i]) {
        nonempty = false;
        continue;
      }
      nonempty = true;
      kv.priority = send.priority;
      kv.keys = send.keys.segment(pos[i], pos[i + 1]);
      if (send.lens.empty()) {
        kv.vals = send.vals.empty() ? SArray<Val>() : send.vals.segment(pos[i] * k, pos[i + 1] * k);
      } else {
        kv.lens = send.lens.segment(pos[i], pos[i + 1]);
        size_t len = 0;
        for (int l : kv.lens) len += l;
        if (!send.vals.empty()) kv.vals = send.vals.segment(val_begin, val_begin + len);
        val_begin += len;
      }
    }
  }

  void AddCallback(int ts, const Callback& cb) {
    if (!cb) return;
    std::lock_guard<std::mutex> lock(mu_);
    callbacks_[ts] = cb;
  }

  void RunCallback(int ts) {
    Callback cb;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = callbacks_.find(ts);
      if (it == callbacks_.end()) return;
      cb = std::move(it->second);
      callbacks_.erase(it);
    }
    cb();
  }

  // Libra: the server rank the slicer sends each of `keys` (sorted) to.
  std::vector<uint32_t> ServerOf(const SArray<Key>& keys) {
    KVPairs<Val> probe;
    probe.keys = keys;
    probe.vals.resize(keys.size(), Val());
    SlicedKVs sliced;
    slicer_(probe, Postoffice::Get()->GetServerKeyRanges(), &sliced);
    return internal::SliceOfEachKey(keys, sliced);
  }

  // A request completes when all its parts have: one per server slice sent,
  // plus, with Libra, one for the hot path.
  int NewRequest() { return obj_->NewRequest(kServerGroup, hot_ ? 1 : 0); }

  void Send(int ts, bool push, bool pull, int cmd, const KVPairs<Val>& kvs) {
    if (hot_) {
      SendWithHotPath(ts, push, pull, cmd, kvs);
      return;
    }
    SendToServers(ts, push, pull, cmd, kvs, 0);
  }

  // hot_ is set only when Val is float; for other types this is never called.
  // (Member templates, so that an explicit instantiation of KVWorker<double>
  // does not compile the float-only one.)
  template <typename V = Val>
  typename std::enable_if<!std::is_same<V, float>::value>::type SendWithHotPath(
      int, bool, bool, int, const KVPairs<Val>&) {}

  // Libra: the hot keys go to the switch (or are read from the replica),
  // the rest to the servers. The hot part counts as done once the hot path
  // has finished AND everything was sent, so no response can complete the
  // request before all its parts are registered.
  template <typename V = Val>
  typename std::enable_if<std::is_same<V, float>::value>::type SendWithHotPath(
      int ts, bool push, bool pull, int cmd, const KVPairs<Val>& kvs) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      hot_unit_left_[ts] = 2;
    }
    WorkerHotPath::Parts cold;
    auto done = [this, ts, pull](WorkerHotPath::Parts hot) {
      if (pull) {
        std::lock_guard<std::mutex> lock(mu_);
        KVPairs<Val>& values = hot_values_[ts];
        values.keys = hot.keys;
        values.vals = hot.vals;
        values.lens = hot.lens;
      }
      FinishHotUnit(ts);
    };
    WorkerHotPath::Parts all;
    all.keys = kvs.keys;
    all.vals = kvs.vals;
    all.lens = kvs.lens;
    bool hot_pending =
        push ? hot_->Push(all, pull, &cold, done) : hot_->Pull(kvs.keys, &cold.keys, done);
    SendToServers(ts, push, pull, cmd, MakeKVPairs(cold.keys, cold.vals, cold.lens, kvs.priority),
                  1);
    if (!hot_pending) FinishHotUnit(ts);
    FinishHotUnit(ts);
  }

  void FinishHotUnit(int ts) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = hot_unit_left_.find(ts);
      if (--it->second > 0) return;
      hot_unit_left_.erase(it);
    }
    FinishPart(ts);
    obj_->AddResponse(ts, 1);
  }

  // Runs the request's callback when its last part is done.
  void FinishPart(int ts) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = parts_left_.find(ts);
      if (--it->second > 0) return;
      parts_left_.erase(it);
    }
    RunCallback(ts);
  }

  // Slices and sends one request to the servers; slices left empty count as
  // answered. `other_parts` complete elsewhere (FinishPart).
  void SendToServers(int ts, bool push, bool pull, int cmd, const KVPairs<Val>& kvs,
                     int other_parts) {
    SlicedKVs sliced;
    slicer_(kvs, Postoffice::Get()->GetServerKeyRanges(), &sliced);
    int skipped = 0;
    for (const auto& s : sliced) skipped += !s.first;
    const int sent = static_cast<int>(sliced.size()) - skipped;
    {
      std::lock_guard<std::mutex> lock(mu_);
      parts_left_[ts] = sent + other_parts;
      if (pull) {
        auto& keys_by_server = pull_keys_[ts];
        for (size_t i = 0; i < sliced.size(); ++i) {
          if (sliced[i].first) {
            keys_by_server[Postoffice::ServerRankToID(i)] = sliced[i].second.keys;
          }
        }
      }
    }
    obj_->AddResponse(ts, skipped);
    if (sent + other_parts == 0) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        parts_left_.erase(ts);
      }
      RunCallback(ts);
    }
    for (size_t i = 0; i < sliced.size(); ++i) {
      if (!sliced[i].first) continue;
      const KVPairs<Val>& kv = sliced[i].second;
      Message msg;
      msg.meta.app_id = obj_->app_id();
      msg.meta.customer_id = obj_->customer_id();
      msg.meta.request = true;
      msg.meta.push = push;
      msg.meta.pull = pull;
      msg.meta.head = cmd;
      msg.meta.timestamp = ts;
      msg.meta.priority = kv.priority;
      msg.meta.recver = Postoffice::ServerRankToID(static_cast<int>(i));
      msg.AddData(kv.keys);
      msg.AddData(kv.vals);
      if (!kv.lens.empty()) msg.AddData(kv.lens);
      Postoffice::Get()->van()->Send(msg);
    }
  }

  // Responses: keep pulled values; the last response completes the request.
  void Process(const Message& msg) {
    if (msg.meta.simple_app) {
      SimpleApp::Process(msg);
      return;
    }
    int ts = msg.meta.timestamp;
    // A pull of no keys (a custom slicer may send one) is answered without data.
    if (msg.meta.pull && !msg.data.empty()) {
      std::lock_guard<std::mutex> lock(mu_);
      KVPairs<Val> kvs;
      size_t next = 0;
      if (msg.meta.keys_omitted) {
        kvs.keys = pull_keys_[ts][msg.meta.sender];  // the slice this server was asked for
      } else {
        CHECK_GE(msg.data.size(), 1u) << "pull response without keys";
        kvs.keys = SArray<Key>(msg.data[next++]);
      }
      CHECK_GT(msg.data.size(), next) << "pull response without values";
      kvs.vals = SArray<Val>(msg.data[next++]);
      if (msg.data.size() > next) kvs.lens = SArray<int>(msg.data[next]);
      recv_kvs_[ts].push_back(kvs);
    }
    // The customer counts this response after the handler returns.
    FinishPart(ts);
  }

  // Registers the callback that assembles a pull's responses, in key order,
  // into *vals (and *lens), then runs the user's callback.
  template <typename C, typename D>
  int AddPullCallback(const SArray<Key>& keys, C* vals, D* lens, int cmd, const Callback& cb) {
    (void)cmd;
    int ts = NewRequest();
    AddCallback(ts, [this, ts, keys, vals, lens, cb]() mutable {
      std::vector<KVPairs<Val>> parts;
      {
        std::lock_guard<std::mutex> lock(mu_);
        parts = std::move(recv_kvs_[ts]);
        recv_kvs_.erase(ts);
        pull_keys_.erase(ts);
        auto hot = hot_values_.find(ts);
        if (hot != hot_values_.end()) {
          // Hot keys interleave with the servers' ranges: merge by key.
          if (!hot->second.keys.empty())
            parts = {internal::MergeByKey(std::move(parts), hot->second)};
          hot_values_.erase(hot);
        }
      }
      size_t total_keys = 0, total_vals = 0;
      for (const auto& p : parts) {
        total_keys += p.keys.size();
        total_vals += p.vals.size();
      }
      CHECK_EQ(total_keys, keys.size()) << "servers answered a pull with the wrong keys";
      std::sort(parts.begin(), parts.end(), [](const KVPairs<Val>& a, const KVPairs<Val>& b) {
        return a.keys.empty() || (!b.keys.empty() && a.keys.front() < b.keys.front());
      });

      if (HandOver(parts, vals, lens)) {
        if (cb) cb();
        return;
      }
      if (vals->empty()) {
        vals->resize(total_vals);
      } else {
        CHECK_EQ(vals->size(), total_vals) << "pull: output has the wrong size";
      }
      Val* out = vals->data();
      for (const auto& p : parts) {
        std::copy(p.vals.begin(), p.vals.end(), out);
        out += p.vals.size();
      }
      if (lens) {
        lens->resize(total_keys);
        int* lout = lens->data();
        for (const auto& p : parts) {
          if (p.lens.empty()) {
            int k = p.keys.empty() ? 0 : static_cast<int>(p.vals.size() / p.keys.size());
            std::fill(lout, lout + p.keys.size(), k);
          } else {
            std::copy(p.lens.begin(), p.lens.end(), lout);
          }
          lout += p.keys.size();
        }
      }
      if (cb) cb();
    });
    return ts;
  }

  // A zero-copy pull answered by one server takes the received array as it
  // is; other outputs are copied into.
  template <typename C, typename D>
  static bool HandOver(const std::vector<KVPairs<Val>>&, C*, D*) {
    return false;
  }
  static bool HandOver(const std::vector<KVPairs<Val>>& parts, SArray<Val>* vals,
                       SArray<int>* lens) {
    if (!vals->empty() || parts.size() != 1) return false;
    *vals = parts[0].vals;  // no copy
    if (lens) *lens = parts[0].lens;
    return true;
  }

  std::mutex mu_;
  std::unordered_map<int, std::vector<KVPairs<Val>>> recv_kvs_;
  // Keys of each pull request's slices, by timestamp and server node id.
  std::unordered_map<int, std::unordered_map<int, SArray<Key>>> pull_keys_;
  std::unordered_map<int, Callback> callbacks_;
  Slicer slicer_;
  std::unordered_map<int, int> parts_left_;  // by timestamp: parts not done yet
  // Libra's hot path (nullptr when off): the hot part of each request, and
  // the values a hot pull read from the replica.
  std::unique_ptr<WorkerHotPath> hot_;
  std::unordered_map<int, int> hot_unit_left_;
  std::unordered_map<int, KVPairs<Val>> hot_values_;
};

template <typename Val>
class KVServer : public SimpleApp {
 public:
  using ReqHandle =
      std::function<void(const KVMeta& req_meta, const KVPairs<Val>& req_data, KVServer* server)>;

  explicit KVServer(int app_id) : SimpleApp() {
    obj_ = new Customer(app_id, app_id, [this](const Message& m) { Process(m); });
    obj_->set_finalize_handle([this] { UseDefaultRequestHandle(); });
    // Libra: the hot path delivers the switch's sums to the float server of app 0.
    if (app_id == 0) CreateHotPath();
  }
  virtual ~KVServer() {
    UseDefaultRequestHandle();  // the customer's thread must not wait on it
    hot_.reset();
    delete obj_;
    obj_ = nullptr;
  }

  // SimpleApp's requests and responses still reach a KVServer: its handles
  // and Response stay callable beside the KV ones.
  using SimpleApp::Response;
  using SimpleApp::set_request_handle;

  void set_request_handle(const ReqHandle& request_handle) {
    CHECK(request_handle) << "invalid request handle";
    {
      std::lock_guard<std::mutex> lock(handle_mu_);
      request_handle_ = request_handle;
    }
    handle_set_.notify_all();
  }

  // Answers a request; for a pull, `res` holds the keys and values asked for.
  void Response(const KVMeta& req, const KVPairs<Val>& res = KVPairs<Val>()) {
    if (req.from_switch) {
      HotResponse(req.timestamp, res.vals);
      return;
    }
    Message msg;
    msg.meta.app_id = obj_->app_id();
    msg.meta.customer_id = req.customer_id;
    msg.meta.request = false;
    msg.meta.push = req.push;
    msg.meta.pull = req.pull;
    msg.meta.head = req.cmd;
    msg.meta.timestamp = req.timestamp;
    msg.meta.recver = req.sender;
    if (req.pull) {
      // The usual handle answers with the request's own keys array; the
      // worker has those keys, so they need not travel back.
      std::lock_guard<std::mutex> lock(pull_keys_mu_);
      auto it = pull_keys_.find(std::make_tuple(req.sender, req.customer_id, req.timestamp));
      if (it != pull_keys_.end()) {
        msg.meta.keys_omitted = res.keys.data() == it->second.data() &&
                                res.keys.size() == it->second.size() && !res.keys.empty();
        pull_keys_.erase(it);
      }
    }
    if (!res.keys.empty()) {
      if (!msg.meta.keys_omitted) msg.AddData(res.keys);
      msg.AddData(res.vals);
      if (!res.lens.empty()) msg.AddData(res.lens);
    }
    Postoffice::Get()->van()->Send(msg);
  }

  // Runs the request handle. Requests that arrive before the application
  // has set its handle wait for it. Libra's hot path also calls this directly.
  void HandleRequest(const KVMeta& meta, const KVPairs<Val>& data) {
    // Called under the lock, not copied: the handle carries the server's state.
    std::unique_lock<std::mutex> lock(handle_mu_);
    handle_set_.wait(lock, [this] { return static_cast<bool>(request_handle_); });
    request_handle_(meta, data, this);
  }

 private:
  // Libra's hot path, for float servers only (member templates, so that an
  // explicit instantiation of KVServer<double> does not compile them).
  template <typename V = Val>
  typename std::enable_if<!std::is_same<V, float>::value>::type CreateHotPath() {}
  template <typename V = Val>
  typename std::enable_if<std::is_same<V, float>::value>::type CreateHotPath() {
    hot_ = hot_path_hooks::CreateServer([this](const ServerHotPath::Request& r) {
      KVMeta meta;
      meta.cmd = 0;
      meta.push = r.push;
      meta.pull = r.pull;
      meta.sender = -1;
      meta.timestamp = r.timestamp;
      meta.customer_id = 0;
      meta.num_merged = r.num_merged;
      meta.from_switch = true;
      KVPairs<Val> data;
      data.keys = r.keys;
      if (r.push) {
        data.vals = r.vals;
        data.lens = r.lens;
      }
      HandleRequest(meta, data);
    });
  }
  template <typename V = Val>
  typename std::enable_if<!std::is_same<V, float>::value>::type HotResponse(int, const SArray<V>&) {
  }
  template <typename V = Val>
  typename std::enable_if<std::is_same<V, float>::value>::type HotResponse(int timestamp,
                                                                           const SArray<V>& vals) {
    if (hot_) hot_->OnResponse(timestamp, vals);
  }

  void Process(const Message& msg) {
    if (msg.meta.simple_app) {
      SimpleApp::Process(msg);
      return;
    }
    KVMeta meta;
    meta.cmd = msg.meta.head;
    meta.push = msg.meta.push;
    meta.pull = msg.meta.pull;
    meta.sender = msg.meta.sender;
    meta.timestamp = msg.meta.timestamp;
    meta.customer_id = msg.meta.customer_id;
    meta.num_merged = msg.meta.num_merged;
    KVPairs<Val> data;
    if (!msg.data.empty()) {
      CHECK_GE(msg.data.size(), 2u) << "KV request without values array";
      data.keys = SArray<Key>(msg.data[0]);
      data.vals = SArray<Val>(msg.data[1]);
      if (msg.data.size() > 2) data.lens = SArray<int>(msg.data[2]);
    }
    if (meta.pull) {
      std::lock_guard<std::mutex> lock(pull_keys_mu_);
      pull_keys_[std::make_tuple(meta.sender, meta.customer_id, meta.timestamp)] = data.keys;
    }
    HandleRequest(meta, data);
  }

  std::mutex handle_mu_;
  std::condition_variable handle_set_;
  ReqHandle request_handle_;
  // Keys of pull requests not answered yet, by (sender, customer, timestamp).
  std::mutex pull_keys_mu_;
  std::map<std::tuple<int, int, int>, SArray<Key>> pull_keys_;
  std::unique_ptr<ServerHotPath> hot_;  // Libra's hot path, nullptr when off
};

// Sums pushed values per key and answers pulls with the sums. One value per key.
template <typename Val>
struct KVServerDefaultHandle {
  void operator()(const KVMeta& req_meta, const KVPairs<Val>& req_data, KVServer<Val>* server) {
    size_t n = req_data.keys.size();
    KVPairs<Val> res;
    if (req_meta.push) {
      CHECK_EQ(n, req_data.vals.size()) << "KVServerDefaultHandle takes one value per key";
    }
    if (req_meta.pull) {
      res.keys = req_data.keys;
      res.vals.resize(n);
    }
    for (size_t i = 0; i < n; ++i) {
      Key key = req_data.keys[i];
      if (req_meta.push) store[key] += req_data.vals[i];
      if (req_meta.pull) res.vals[i] = store[key];
    }
    server->Response(req_meta, res);
  }
  std::unordered_map<Key, Val> store;
};

}  // namespace ps
