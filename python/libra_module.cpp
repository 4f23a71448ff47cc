// `import libra`: the PS-lite API of Libra's runtime for Python (the
// extension module libra._libra; python/libra/__init__.py wraps it).
//
// Buffers: keys (uint64), values (float32) and lens (int32) that are
// C-contiguous numpy arrays of the right dtype are sent without a copy. The
// runtime holds a reference to each such array until it no longer needs its
// memory; the caller must not change it until wait(ts) has returned. The
// runtime's threads never take the GIL: a reference they drop goes to a queue
// that the next call from Python releases.
//
// Every call that may block (start, finalize, barrier, wait, sending) releases
// the GIL. Runtime errors (ps::Error) become libra.Error with the runtime's
// message; bad arguments raise TypeError or ValueError before anything is sent.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "bag_sums.h"
#include "data_functions.h"
#include "optimizer_server.h"
#include "ps/internal/hot_path_hooks.h"
#include "ps/ps.h"
#include "train/every_server_slicer.h"

namespace py = pybind11;

namespace libra::python {
namespace {

// References to numpy arrays that the runtime let go of, on any thread;
// released by the next call from Python (which holds the GIL).
class ReleaseQueue {
 public:
  void Add(PyObject* object) {
    std::lock_guard<std::mutex> lock(mu_);
    objects_.push_back(object);
  }
  void Drain() {  // GIL held
    std::vector<PyObject*> objects;
    {
      std::lock_guard<std::mutex> lock(mu_);
      objects.swap(objects_);
    }
    for (PyObject* o : objects) Py_DECREF(o);
  }

 private:
  std::mutex mu_;
  std::vector<PyObject*> objects_;
};

// Never destroyed: the runtime's threads may still drop references at exit.
ReleaseQueue& Releases() {
  static ReleaseQueue* queue = new ReleaseQueue;
  return *queue;
}

// An SArray over the memory of `array` (C-contiguous, element type T), which
// stays alive while any SArray shares it.
template <typename T>
ps::SArray<T> Borrow(const py::array& array) {
  PyObject* owner = array.ptr();
  Py_INCREF(owner);
  ps::SArray<T> s;
  s.reset(static_cast<T*>(const_cast<void*>(array.data())), static_cast<size_t>(array.size()),
          [owner](T*) { Releases().Add(owner); });
  return s;
}

// A numpy array over the memory of `s`, which it keeps alive.
template <typename T>
py::array_t<T> Lend(const ps::SArray<T>& s) {
  auto* keep = new ps::SArray<T>(s);
  py::capsule owner(keep, [](void* p) { delete static_cast<ps::SArray<T>*>(p); });
  return py::array_t<T>(static_cast<py::ssize_t>(keep->size()), keep->data(), owner);
}

bool IsContiguous(const py::array& a) { return (a.flags() & py::array::c_style) != 0; }

std::string DtypeName(const py::array& a) { return py::str(a.dtype()).cast<std::string>(); }

// Keys: a 1-D array of non-negative integers, sorted ascending and unique.
ps::SArray<ps::Key> Keys(const py::handle& object) {
  py::array a = py::array::ensure(object);
  if (!a) throw py::type_error("keys must be an array of integers");
  if (a.ndim() != 1) {
    throw py::value_error("keys must be 1-D, got " + std::to_string(a.ndim()) + " dimensions");
  }
  const char kind = a.dtype().kind();
  if (a.size() > 0 && kind != 'u' && kind != 'i') {
    throw py::type_error("keys must be integers (uint64), got " + DtypeName(a));
  }
  ps::SArray<ps::Key> keys;
  if (a.dtype().equal(py::dtype::of<uint64_t>()) && IsContiguous(a)) {
    keys = Borrow<ps::Key>(a);
  } else {
    if (kind == 'i' && a.size() > 0) {
      auto signed_keys = py::array_t<int64_t, py::array::c_style | py::array::forcecast>::ensure(a);
      const int64_t* p = signed_keys.data();
      for (py::ssize_t i = 0; i < signed_keys.size(); ++i) {
        if (p[i] < 0) {
          throw py::value_error("keys must be non-negative, keys[" + std::to_string(i) +
                                "] = " + std::to_string(p[i]));
        }
      }
    }
    auto converted = py::array_t<uint64_t, py::array::c_style | py::array::forcecast>::ensure(a);
    if (!converted) throw py::type_error("keys must be integers (uint64), got " + DtypeName(a));
    keys = Borrow<ps::Key>(converted);
  }
  for (size_t i = 1; i < keys.size(); ++i) {
    if (keys[i - 1] >= keys[i]) {
      throw py::value_error("keys must be sorted ascending and unique: keys[" +
                            std::to_string(i - 1) + "] = " + std::to_string(keys[i - 1]) +
                            ", keys[" + std::to_string(i) + "] = " + std::to_string(keys[i]));
    }
  }
  return keys;
}

// Values: float32 (any shape, read in C order). A numpy array of another
// dtype is refused rather than silently copied; a list is converted.
ps::SArray<float> Values(const py::handle& object, const char* what) {
  const bool was_array = py::isinstance<py::array>(object);
  py::array a = py::array::ensure(object);
  if (!a) throw py::type_error(std::string(what) + " must be a float32 array");
  if (was_array && !a.dtype().equal(py::dtype::of<float>()) && a.size() > 0) {
    throw py::type_error(std::string(what) + " must be float32, got " + DtypeName(a) +
                         " (convert with .astype(numpy.float32))");
  }
  auto f = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(a);
  if (!f) throw py::type_error(std::string(what) + " must be a float32 array");
  return Borrow<float>(f);
}

// An output array the runtime or wait() writes into: float32, C-contiguous, writeable.
py::array Output(const py::handle& object, const char* what) {
  if (!py::isinstance<py::array>(object)) {
    throw py::type_error(std::string(what) + " must be a numpy float32 array");
  }
  py::array a = py::reinterpret_borrow<py::array>(object);
  if (!a.dtype().equal(py::dtype::of<float>())) {
    throw py::type_error(std::string(what) + " must be float32, got " + DtypeName(a));
  }
  if (!IsContiguous(a) || !a.writeable()) {
    throw py::value_error(std::string(what) + " must be C-contiguous and writeable");
  }
  return a;
}

// lens: one non-negative int per key, summing to the number of values.
ps::SArray<int> Lens(const py::handle& object, size_t num_keys, size_t num_vals) {
  if (object.is_none()) {
    if (num_keys == 0 ? num_vals != 0 : num_vals % num_keys != 0) {
      throw py::value_error(std::to_string(num_vals) + " values do not divide among " +
                            std::to_string(num_keys) + " keys (give lens for varying lengths)");
    }
    return {};
  }
  py::array a = py::array::ensure(object);
  if (!a || (a.size() > 0 && a.dtype().kind() != 'i' && a.dtype().kind() != 'u')) {
    throw py::type_error("lens must be an array of integers");
  }
  auto l = py::array_t<int32_t, py::array::c_style | py::array::forcecast>::ensure(a);
  if (static_cast<size_t>(l.size()) != num_keys) {
    throw py::value_error("lens has " + std::to_string(l.size()) + " entries for " +
                          std::to_string(num_keys) + " keys");
  }
  int64_t total = 0;
  for (py::ssize_t i = 0; i < l.size(); ++i) {
    if (l.data()[i] < 0) throw py::value_error("lens must be non-negative");
    total += l.data()[i];
  }
  if (total != static_cast<int64_t>(num_vals)) {
    throw py::value_error("lens sum to " + std::to_string(total) + " but there are " +
                          std::to_string(num_vals) + " values");
  }
  return Borrow<int>(l);
}

// A runtime error's message without the log line's "[hh:mm:ss] F file.cpp:12: ".
std::string RuntimeMessage(const std::string& what) {
  if (what.size() > 1 && what[0] == '[') {
    const size_t close = what.find("] F ");
    const size_t colon = close == std::string::npos ? close : what.find(": ", close);
    if (colon != std::string::npos) return what.substr(colon + 2);
  }
  return what;
}

int GroupOf(const py::handle& group) {
  if (py::isinstance<py::int_>(group)) return group.cast<int>();
  const std::string name = py::str(group);
  if (name == "all") return ps::kScheduler + ps::kServerGroup + ps::kWorkerGroup;
  if (name == "workers") return ps::kWorkerGroup;
  if (name == "servers") return ps::kServerGroup;
  if (name == "workers+servers") return ps::kWorkerGroup + ps::kServerGroup;
  throw py::value_error("unknown group '" + name +
                        "' (all, workers, servers, workers+servers, or a PS-lite group number)");
}

// What lives until finalize(): the runtime wants a worker's hot path and a
// server's handle alive through its final barrier, whatever Python collects.
struct Registry {
  std::mutex mu;
  std::vector<std::shared_ptr<void>> alive;
  bool started = false;
};
Registry& Nodes() {
  static Registry* registry = new Registry;
  return *registry;
}

void RequireStarted(const char* what) {
  std::lock_guard<std::mutex> lock(Nodes().mu);
  if (!Nodes().started) throw ps::Error(std::string(what) + ": call libra.start() first");
}

class Worker {
 public:
  Worker(int app_id, int customer_id, bool sync) {
    RequireStarted("KVWorker");
    if (!ps::IsWorker()) throw ps::Error("KVWorker: this node is not a worker");
    Releases().Drain();
    {
      py::gil_scoped_release release;
      kv_ = std::make_shared<ps::KVWorker<float>>(app_id, customer_id);
    }
    if (sync) {
      broadcast_ = std::make_shared<bool>(false);
      kv_->set_slicer(train::EveryServerSlicer(broadcast_));
    }
    std::lock_guard<std::mutex> lock(Nodes().mu);
    Nodes().alive.push_back(kv_);
  }

  int Push(const py::handle& keys, const py::handle& vals, const py::handle& lens) {
    PushArgs a = ParsePush(keys, vals, lens);
    return Submit(std::make_unique<Request>(), true,
                  [&](Request&) { return kv_->ZPush(a.keys, a.vals, a.lens); });
  }

  int Pull(const py::handle& keys, const py::handle& out, const py::handle& lens) {
    Releases().Drain();
    auto k = Keys(keys);
    auto request = std::make_unique<Request>();
    request->pull = true;
    if (!out.is_none()) request->out = Output(out, "out");
    if (!lens.is_none()) request->lens_out = LensOutput(lens, k.size());
    return Submit(std::move(request), false,
                  [&](Request& r) { return kv_->ZPull(k, &r.vals, &r.lens); });
  }

  int PushPull(const py::handle& keys, const py::handle& vals, const py::handle& out,
               const py::handle& lens) {
    PushArgs a = ParsePush(keys, vals, lens);
    auto request = std::make_unique<Request>();
    request->pull = true;
    if (!out.is_none()) {
      py::array o = Output(out, "out");
      if (static_cast<size_t>(o.size()) != a.vals.size()) {
        throw py::value_error("out has " + std::to_string(o.size()) + " floats for " +
                              std::to_string(a.vals.size()) + " values pushed");
      }
      request->vals = Borrow<float>(o);  // the runtime writes the answer there
      request->out = o;
      request->in_place = true;
    }
    request->lens = a.lens;
    return Submit(std::move(request), true, [&](Request& r) {
      return kv_->ZPushPull(a.keys, a.vals, &r.vals, a.lens.empty() ? nullptr : &r.lens);
    });
  }

  // Blocks until request `ts` has completed; returns the pulled values
  // (`out` when one was given) for a pull or push-pull, None for a push.
  py::object Wait(int ts) {
    Releases().Drain();
    auto it = requests_.find(ts);
    if (it == requests_.end()) {
      throw py::value_error("no request with timestamp " + std::to_string(ts) +
                            " is outstanding (each can be waited for once)");
    }
    std::unique_ptr<Request> request = std::move(it->second);
    requests_.erase(it);
    {
      py::gil_scoped_release release;
      kv_->Wait(ts);
    }
    if (!request->pull) return py::none();
    if (!request->lens_out.is_none()) {
      py::array l = request->lens_out;
      if (request->lens.empty() && l.size() > 0) {
        // ps::KVWorker::ZPull hands a single server's answer over without
        // filling lens when that server sent none (fixed lengths).
        request->lens = ps::SArray<int>(static_cast<size_t>(l.size()),
                                        static_cast<int>(request->vals.size() / l.size()));
      }
      if (request->lens.size() != static_cast<size_t>(l.size())) {
        throw py::value_error("pull: lens has room for " + std::to_string(l.size()) +
                              " keys, the servers answered " +
                              std::to_string(request->lens.size()));
      }
      std::memcpy(l.mutable_data(), request->lens.data(), request->lens.size() * sizeof(int));
    }
    if (request->in_place) return request->out;
    if (request->out.is_none()) return Lend(request->vals);
    py::array out = request->out;
    if (static_cast<size_t>(out.size()) != request->vals.size()) {
      throw py::value_error("pull: out has " + std::to_string(out.size()) +
                            " floats, the servers answered " +
                            std::to_string(request->vals.size()));
    }
    {
      py::gil_scoped_release release;
      std::memcpy(out.mutable_data(), request->vals.data(), request->vals.size() * sizeof(float));
    }
    return out;
  }

  size_t outstanding() const { return requests_.size(); }

 private:
  struct Request {
    bool pull = false;
    bool in_place = false;   // push-pull into `out`
    ps::SArray<float> vals;  // a pull's answer (written by the runtime)
    ps::SArray<int> lens;    // a pull's lengths per key
    py::object out = py::none();
    py::object lens_out = py::none();
  };

  // Sets a sync worker's slicer to send to every server while it exists.
  struct Broadcast {
    explicit Broadcast(bool* flag) : flag_(flag) {
      if (flag_) *flag_ = true;
    }
    ~Broadcast() {
      if (flag_) *flag_ = false;
    }
    Broadcast(const Broadcast&) = delete;
    Broadcast& operator=(const Broadcast&) = delete;
    bool* flag_;
  };

  struct PushArgs {
    ps::SArray<ps::Key> keys;
    ps::SArray<float> vals;
    ps::SArray<int> lens;
  };

  PushArgs ParsePush(const py::handle& keys, const py::handle& vals, const py::handle& lens) {
    Releases().Drain();
    PushArgs a;
    a.keys = Keys(keys);
    a.vals = Values(vals, "vals");
    a.lens = Lens(lens, a.keys.size(), a.vals.size());
    if (broadcast_ && !a.lens.empty()) throw py::value_error("a sync KVWorker takes no lens");
    return a;
  }

  // Sends with the GIL released (one request at a time, so that a sync
  // worker's broadcast flag covers only pushes); `send` returns the timestamp.
  template <typename Send>
  int Submit(std::unique_ptr<Request> request, bool push, const Send& send) {
    int ts;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(send_mu_);
      Broadcast on(push ? broadcast_.get() : nullptr);
      ts = send(*request);
    }
    requests_[ts] = std::move(request);
    return ts;
  }

  static py::array LensOutput(const py::handle& object, size_t num_keys) {
    if (!py::isinstance<py::array>(object))
      throw py::type_error("lens must be a numpy int32 array");
    py::array a = py::reinterpret_borrow<py::array>(object);
    if (!a.dtype().equal(py::dtype::of<int32_t>()) || !IsContiguous(a) || !a.writeable()) {
      throw py::type_error("lens must be a writeable C-contiguous int32 array");
    }
    if (static_cast<size_t>(a.size()) != num_keys) {
      throw py::value_error("lens has " + std::to_string(a.size()) + " entries for " +
                            std::to_string(num_keys) + " keys");
    }
    return a;
  }

  std::shared_ptr<ps::KVWorker<float>> kv_;
  std::shared_ptr<bool> broadcast_;  // set for a sync worker
  std::mutex send_mu_;
  std::unordered_map<int, std::unique_ptr<Request>> requests_;  // under the GIL
};

class Server {
 public:
  Server(const std::string& optimizer, float lr, uint32_t dim, float l1, float l2, float beta,
         float initial_accumulator, float init_scale, uint64_t seed, bool sync, int app_id,
         const py::handle& initial_keys, const py::handle& initial_values) {
    RequireStarted("KVServer");
    if (!ps::IsServer()) throw ps::Error("KVServer: this node is not a server");
    OptimizerServerConfig config;
    config.optimizer.kind = train::ParseOptimizerKind(optimizer);
    config.optimizer.learning_rate = lr;
    config.optimizer.l1 = l1;
    config.optimizer.l2 = l2;
    config.optimizer.ftrl_beta = beta;
    config.optimizer.initial_accumulator = initial_accumulator;
    config.dim = dim;
    config.init_scale = init_scale;
    config.seed = seed;
    config.sync = sync;
    if (initial_keys.is_none() != initial_values.is_none()) {
      throw py::value_error("initial_keys and initial_values go together");
    }
    if (!initial_keys.is_none()) {
      const auto keys = Keys(initial_keys);
      const auto values = Values(initial_values, "initial_values");
      if (values.size() != keys.size() * static_cast<size_t>(dim)) {
        throw py::value_error("initial_values has " + std::to_string(values.size()) +
                              " floats, initial_keys needs " + std::to_string(dim) + " per key (" +
                              std::to_string(keys.size() * static_cast<size_t>(dim)) + ")");
      }
      for (size_t i = 0; i < keys.size(); ++i) {
        config.initial[keys[i]].assign(values.data() + i * dim, values.data() + (i + 1) * dim);
      }
    }
    server_ = std::make_shared<OptimizerServer>(config, static_cast<uint32_t>(ps::NumWorkers()));
    {
      py::gil_scoped_release release;
      server_->Serve(app_id);
    }
    std::lock_guard<std::mutex> lock(Nodes().mu);
    Nodes().alive.push_back(server_);
  }

  py::dict Stats() const {
    const OptimizerServerStats s = server_->stats();
    py::dict d;
    d["pushes"] = s.pushes;
    d["pulls"] = s.pulls;
    d["switch_pushes"] = s.switch_pushes;
    d["keys_updated"] = s.keys_updated;
    d["rounds"] = s.rounds;
    d["malformed_pushes"] = s.malformed_pushes;
    d["parameters"] = s.parameters;
    return d;
  }

  py::array_t<float> ValuesOf(const py::handle& keys) const {
    auto k = Keys(keys);
    std::vector<ps::Key> list(k.begin(), k.end());
    std::vector<float> v = server_->Values(list);
    py::array_t<float> out(static_cast<py::ssize_t>(v.size()));
    std::copy(v.begin(), v.end(), out.mutable_data());
    return out;
  }

 private:
  std::shared_ptr<OptimizerServer> server_;
};

void Start(int customer_id, bool barrier) {
  Releases().Drain();
  {
    py::gil_scoped_release release;
    // The LIBRA_* settings first, as ps::Start does, so that a bad one fails
    // before this node registers; but raise instead of exiting the process.
    ps::hot_path_hooks::CheckSettings();
    ps::Postoffice::Get()->Start(customer_id, nullptr, barrier);
  }
  std::lock_guard<std::mutex> lock(Nodes().mu);
  Nodes().started = true;
}

void Finalize(int customer_id, bool barrier) {
  RequireStarted("finalize");
  Releases().Drain();
  std::vector<std::shared_ptr<void>> alive;
  {
    py::gil_scoped_release release;
    ps::Postoffice::Get()->Finalize(customer_id, barrier);
    if (customer_id == 0) {
      {
        std::lock_guard<std::mutex> lock(Nodes().mu);
        alive.swap(Nodes().alive);
        Nodes().started = false;
      }
      alive.clear();  // destroys the KVWorkers and KVServers, joining their threads
    }
  }
  Releases().Drain();
}

}  // namespace
}  // namespace libra::python

PYBIND11_MODULE(_libra, m) {
  using namespace libra::python;
  m.doc() = "Libra's PS-lite-compatible parameter server (see docs/python.md)";
  static py::exception<ps::Error> error(m, "Error", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ps::Error& e) {
      error(RuntimeMessage(e.what()).c_str());
    }
  });

  m.def("start", &Start, py::arg("customer_id") = 0, py::arg("barrier") = true,
        "Starts this node (role and job from the DMLC_* environment) and, by default, "
        "waits until every node has started.");
  m.def("finalize", &Finalize, py::arg("customer_id") = 0, py::arg("barrier") = true,
        "Stops this node, by default after a barrier of all nodes.");
  m.def(
      "barrier",
      [](const py::handle& group, int customer_id) {
        RequireStarted("barrier");
        const int g = GroupOf(group);
        py::gil_scoped_release release;
        ps::Postoffice::Get()->Barrier(customer_id, g);
      },
      py::arg("group") = "all", py::arg("customer_id") = 0,
      "Blocks until every node of the group has called barrier.");
  m.def("is_worker", [] { return ps::IsWorker(); });
  m.def("is_server", [] { return ps::IsServer(); });
  m.def("is_scheduler", [] { return ps::IsScheduler(); });
  m.def(
      "rank",
      [] {
        RequireStarted("rank");
        return ps::MyRank();
      },
      "This node's rank among the nodes of its role.");
  m.def("num_workers", [] { return ps::NumWorkers(); });
  m.def("num_servers", [] { return ps::NumServers(); });
  m.def(
      "server_key_ranges",
      [] {
        RequireStarted("server_key_ranges");
        std::vector<std::pair<uint64_t, uint64_t>> ranges;
        for (const ps::Range& r : ps::Postoffice::Get()->GetServerKeyRanges()) {
          ranges.emplace_back(r.begin(), r.end());
        }
        return ranges;
      },
      "The key range [begin, end) of each server, by rank.");
  m.attr("MAX_KEY") = py::int_(ps::kMaxKey);
  AddDataFunctions(m);
  AddBagSums(m);

  py::class_<Worker>(m, "_KVWorker")
      .def(py::init<int, int, bool>(), py::arg("app_id") = 0, py::arg("customer_id") = 0,
           py::arg("sync") = false)
      .def("push", &Worker::Push, py::arg("keys"), py::arg("vals"), py::arg("lens") = py::none())
      .def("pull", &Worker::Pull, py::arg("keys"), py::arg("out") = py::none(),
           py::arg("lens") = py::none())
      .def("push_pull", &Worker::PushPull, py::arg("keys"), py::arg("vals"),
           py::arg("out") = py::none(), py::arg("lens") = py::none())
      .def("wait", &Worker::Wait, py::arg("ts"))
      .def_property_readonly("outstanding", &Worker::outstanding);

  py::class_<Server>(m, "_KVServer")
      .def(py::init<const std::string&, float, uint32_t, float, float, float, float, float,
                    uint64_t, bool, int, const py::handle&, const py::handle&>(),
           py::arg("optimizer") = "sgd", py::arg("lr") = 0.1f, py::arg("dim") = 1,
           py::arg("l1") = 0.0f, py::arg("l2") = 0.0f, py::arg("beta") = 1.0f,
           py::arg("initial_accumulator") = 1e-6f, py::arg("init_scale") = 0.0f,
           py::arg("seed") = 1, py::arg("sync") = false, py::arg("app_id") = 0,
           py::arg("initial_keys") = py::none(), py::arg("initial_values") = py::none())
      .def("stats", &Server::Stats)
      .def("values", &Server::ValuesOf, py::arg("keys"));
}
