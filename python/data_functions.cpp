#include "data_functions.h"

#include <pybind11/numpy.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "data/dataset.h"
#include "data/feature_hash.h"
#include "train/batch.h"
#include "train/job_plan.h"
#include "train/key_index.h"

namespace py = pybind11;

namespace libra::python {
namespace {

// A numpy array that owns a moved-in vector (no copy of the data).
template <typename T>
py::array_t<T> Own(std::vector<T>&& v) {
  auto* keep = new std::vector<T>(std::move(v));
  py::capsule owner(keep, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array_t<T>(static_cast<py::ssize_t>(keep->size()), keep->data(), owner);
}

// A 1-D C-contiguous uint64 array of `object` (int64 is read by its bits, as
// torch has no uint64); TypeError for anything else.
py::array_t<uint64_t> KeyArray(const py::handle& object) {
  py::array a = py::array::ensure(object);
  if (!a) throw py::type_error("keys must be an array of integers");
  const char kind = a.dtype().kind();
  if (a.size() > 0 && kind != 'u' && kind != 'i') {
    throw py::type_error("keys must be integers (uint64 or int64), got " +
                         py::str(a.dtype()).cast<std::string>());
  }
  if (kind == 'i' && a.dtype().itemsize() == 8) a = a.attr("view")("uint64");
  auto keys = py::array_t<uint64_t, py::array::c_style | py::array::forcecast>::ensure(a);
  if (!keys) throw py::type_error("keys must be integers (uint64 or int64)");
  return keys;
}

py::dict ReadForPython(const std::string& path, int shard, int num_shards, bool skip_bad_lines) {
  if (num_shards < 1 || shard < 0 || shard >= num_shards) {
    throw py::value_error("shard must be in [0, num_shards), got shard " + std::to_string(shard) +
                          " of " + std::to_string(num_shards));
  }
  train::ReadOptions options;
  options.shard = shard;
  options.num_shards = num_shards;
  options.skip_bad_lines = skip_bad_lines;
  train::ReadStats stats;
  train::Dataset data;
  {
    py::gil_scoped_release release;
    try {
      data = train::ReadDataset(path, options, &stats);
    } catch (const train::DataError& e) {
      py::gil_scoped_acquire acquire;
      throw py::value_error(e.what());
    }
  }
  py::dict d;
  d["num_fields"] = data.num_fields;
  d["file_rows"] = stats.rows;  // valid rows of the whole file, all shards
  d["bad_lines"] = stats.bad_lines;
  d["labels"] = Own(std::move(data.labels));
  d["row_begin"] = Own(std::move(data.row_begin));
  d["keys"] = Own(std::move(data.keys));
  d["values"] = Own(std::move(data.values));
  d["fields"] = Own(std::move(data.fields));
  return d;
}

py::array_t<uint64_t> MixKeys(const py::handle& object) {
  auto keys = KeyArray(object);
  std::vector<uint64_t> out(static_cast<size_t>(keys.size()));
  const uint64_t* in = keys.data();
  for (size_t i = 0; i < out.size(); ++i) out[i] = train::Mix64(in[i]);
  return Own(std::move(out));
}

// The sorted unique keys of `object` (mixed first if `mix`), and for every
// key its index into them (int64, so torch can index with it directly).
// Deduplicated in a hash index first, then only the unique keys are sorted:
// a batch has a few times more keys than unique ones (a third of the cost of
// sorting every key with its position).
py::tuple UniqueKeys(const py::handle& object, bool mix) {
  auto keys = KeyArray(object);
  const size_t n = static_cast<size_t>(keys.size());
  std::vector<uint64_t> unique;
  std::vector<int64_t> inverse(n);
  {
    const uint64_t* in = keys.data();
    py::gil_scoped_release release;
    train::KeyIndex index;
    index.Reserve(n);
    std::vector<uint64_t> first_seen;  // entry number -> key
    for (size_t i = 0; i < n; ++i) {
      const uint64_t key = mix ? train::Mix64(in[i]) : in[i];
      bool added = false;
      const uint32_t entry = index.FindOrAdd(key, &added);
      if (added) first_seen.push_back(key);
      inverse[i] = entry;
    }
    std::vector<uint32_t> order(first_seen.size());  // sorted position -> entry
    for (uint32_t e = 0; e < order.size(); ++e) order[e] = e;
    std::sort(order.begin(), order.end(),
              [&](uint32_t a, uint32_t b) { return first_seen[a] < first_seen[b]; });
    std::vector<int64_t> position(order.size());  // entry -> sorted position
    unique.resize(order.size());
    for (size_t p = 0; p < order.size(); ++p) {
      position[order[p]] = static_cast<int64_t>(p);
      unique[p] = first_seen[order[p]];
    }
    for (int64_t& i : inverse) i = position[static_cast<size_t>(i)];
  }
  return py::make_tuple(Own(std::move(unique)), Own(std::move(inverse)));
}

py::dict PlanForPython(uint64_t total_rows, double test_fraction, uint32_t workers,
                       uint32_t batch) {
  if (workers == 0 || batch == 0) throw py::value_error("workers and batch must be at least 1");
  if (!(test_fraction >= 0 && test_fraction < 1)) {
    throw py::value_error("test_fraction must be in [0, 1)");
  }
  const train::JobPlan plan = train::JobPlan::Make(total_rows, test_fraction, workers, batch);
  py::dict d;
  d["total_rows"] = plan.total_rows;
  d["train_rows"] = plan.train_rows;
  d["test_rows"] = plan.test_rows;
  d["iterations_per_epoch"] = plan.iterations_per_epoch;
  py::list rows;
  for (uint32_t r = 0; r < workers; ++r) rows.append(plan.TrainRowsOfWorker(r));
  d["train_rows_of_worker"] = rows;
  return d;
}

}  // namespace

void AddDataFunctions(py::module_& m) {
  m.def("read_dataset", &ReadForPython, py::arg("path"), py::arg("shard") = 0,
        py::arg("num_shards") = 1, py::arg("skip_bad_lines") = false,
        "Reads libsvm, Criteo TSV or Libra's cache as `libra train` does; rows dealt "
        "round-robin to num_shards shards. Returns a dict of CSR numpy arrays.");
  m.def("mix_keys", &MixKeys, py::arg("keys"),
        "The keys `libra train` sends for these feature keys (a bijective 64-bit mix).");
  m.def("unique_keys", &UniqueKeys, py::arg("keys"), py::arg("mix") = true,
        "(sorted unique keys, index of every key into them), mixing the keys first if mix.");
  m.def(
      "dense_key", [](uint32_t i) { return train::DenseParameterKey(i); }, py::arg("i"),
      "The parameter key of `libra train`'s i-th dense key.");
  m.def("job_plan", &PlanForPython, py::arg("total_rows"), py::arg("test_fraction"),
        py::arg("workers"), py::arg("batch"),
        "How `libra train` splits rows: held-out rows, each worker's rows, iterations.");
}

}  // namespace libra::python
