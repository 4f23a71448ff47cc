#include "bag_sums.h"

#include <pybind11/numpy.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace py = pybind11;

namespace libra::python {
namespace {

using Floats = py::array_t<float, py::array::c_style>;
using Indices = py::array_t<int64_t, py::array::c_style>;

// The arguments both directions share, checked once: rows (unique, dim),
// per occurrence its row and weight, per bag its number of occurrences.
struct Bags {
  const float* rows = nullptr;
  int64_t unique = 0;
  int64_t dim = 0;
  const int64_t* index = nullptr;
  int64_t occurrences = 0;
  const float* weights = nullptr;  // nullptr: every weight is 1
  const int64_t* lengths = nullptr;
  int64_t bags = 0;
};

template <typename T>
py::array_t<T, py::array::c_style> Exact(const py::handle& object, const char* what,
                                         const char* dtype) {
  // Exactly this dtype and C order: a silent copy would hide a caller's bug
  // and, for outputs, write into the copy.
  if (!py::isinstance<py::array_t<T>>(object)) {
    throw py::type_error(std::string(what) + " must be a " + dtype + " numpy array");
  }
  auto a = py::reinterpret_borrow<py::array_t<T>>(object);
  if (!(a.flags() & py::array::c_style)) {
    throw py::value_error(std::string(what) + " must be C-contiguous");
  }
  return py::reinterpret_borrow<py::array_t<T, py::array::c_style>>(a);
}

Bags Check(const Floats& rows, const Indices& index, const std::optional<Floats>& weights,
           const Indices& lengths) {
  if (rows.ndim() != 2) throw py::value_error("rows must be 2-D (unique keys, dim)");
  if (index.ndim() != 1 || lengths.ndim() != 1) {
    throw py::value_error("index and lengths must be 1-D");
  }
  Bags b;
  b.rows = rows.data();
  b.unique = rows.shape(0);
  b.dim = rows.shape(1);
  b.index = index.data();
  b.occurrences = index.shape(0);
  b.lengths = lengths.data();
  b.bags = lengths.shape(0);
  if (weights) {
    if (weights->ndim() != 1 || weights->shape(0) != b.occurrences) {
      throw py::value_error("weights must be 1-D, one per index");
    }
    b.weights = weights->data();
  }
  int64_t total = 0;
  for (int64_t i = 0; i < b.bags; ++i) {
    if (b.lengths[i] < 0) throw py::value_error("lengths must not be negative");
    total += b.lengths[i];
  }
  if (total != b.occurrences) {
    throw py::value_error("lengths sum to " + std::to_string(total) + ", index has " +
                          std::to_string(b.occurrences));
  }
  for (int64_t i = 0; i < b.occurrences; ++i) {
    if (b.index[i] < 0 || b.index[i] >= b.unique) {
      throw py::value_error("index[" + std::to_string(i) + "] = " + std::to_string(b.index[i]) +
                            " is not a row of rows (" + std::to_string(b.unique) + ")");
    }
  }
  return b;
}

// The shared arguments as the caller gave them, held while `bags` points
// into them.
struct BagArgs {
  Floats rows;
  Indices index, lengths;
  std::optional<Floats> weights;
  Bags bags;
};

BagArgs ReadBags(const py::handle& rows_in, const py::handle& index_in,
                 const py::handle& weights_in, const py::handle& lengths_in) {
  BagArgs args{Exact<float>(rows_in, "rows", "float32"),
               Exact<int64_t>(index_in, "index", "int64"),
               Exact<int64_t>(lengths_in, "lengths", "int64"),
               std::nullopt,
               {}};
  if (!weights_in.is_none()) args.weights = Exact<float>(weights_in, "weights", "float32");
  args.bags = Check(args.rows, args.index, args.weights, args.lengths);
  return args;
}

Floats Zeros(int64_t n, int64_t dim) {
  Floats a({n, dim});
  std::fill(a.mutable_data(), a.mutable_data() + a.size(), 0.0f);
  return a;
}

// (sums, squares): sums[b] = sum over bag b of w_i rows[index_i]; squares[b]
// the same of (w_i rows[index_i])^2, elementwise (None unless asked for).
py::tuple Forward(const py::handle& rows_in, const py::handle& index_in,
                  const py::handle& weights_in, const py::handle& lengths_in, bool squares) {
  const BagArgs args = ReadBags(rows_in, index_in, weights_in, lengths_in);
  const Bags& b = args.bags;
  Floats sums = Zeros(b.bags, b.dim);
  Floats sq = Zeros(squares ? b.bags : 0, b.dim);
  {
    float* s = sums.mutable_data();
    float* q = sq.mutable_data();
    py::gil_scoped_release release;
    int64_t i = 0;
    for (int64_t bag = 0; bag < b.bags; ++bag) {
      float* out = s + bag * b.dim;
      float* out_sq = squares ? q + bag * b.dim : nullptr;
      for (const int64_t end = i + b.lengths[bag]; i < end; ++i) {
        const float* row = b.rows + b.index[i] * b.dim;
        const float w = b.weights ? b.weights[i] : 1.0f;
        for (int64_t d = 0; d < b.dim; ++d) {
          const float x = w * row[d];
          out[d] += x;
          if (out_sq) out_sq[d] += x * x;
        }
      }
    }
  }
  return py::make_tuple(sums, squares ? py::object(sq) : py::object(py::none()));
}

// (grad_rows, grad_weights): the gradient of sum(grad_sums * sums +
// grad_squares * squares) with respect to rows (one row per unique key,
// summed over its occurrences) and, if asked, to every occurrence's weight.
py::tuple Backward(const py::handle& grad_sums_in, const py::handle& grad_squares_in,
                   const py::handle& rows_in, const py::handle& index_in,
                   const py::handle& weights_in, const py::handle& lengths_in, bool weight_grad) {
  const BagArgs args = ReadBags(rows_in, index_in, weights_in, lengths_in);
  const Bags& b = args.bags;
  const Floats grad_sums = Exact<float>(grad_sums_in, "grad_sums", "float32");
  std::optional<Floats> grad_squares;
  if (!grad_squares_in.is_none()) {
    grad_squares = Exact<float>(grad_squares_in, "grad_squares", "float32");
  }
  const Floats* grads[] = {&grad_sums, grad_squares ? &*grad_squares : nullptr};
  for (const Floats* g : grads) {
    if (g && (g->ndim() != 2 || g->shape(0) != b.bags || g->shape(1) != b.dim)) {
      throw py::value_error("a bag gradient must be (bags, dim), as the forward's output");
    }
  }
  Floats grad_rows = Zeros(b.unique, b.dim);
  Floats grad_weights(weight_grad ? b.occurrences : 0);
  {
    float* gr = grad_rows.mutable_data();
    float* gw = grad_weights.mutable_data();
    const float* gs = grad_sums.data();
    const float* gq = grad_squares ? grad_squares->data() : nullptr;
    py::gil_scoped_release release;
    int64_t i = 0;
    for (int64_t bag = 0; bag < b.bags; ++bag) {
      const float* g = gs + bag * b.dim;
      const float* g_sq = gq ? gq + bag * b.dim : nullptr;
      for (const int64_t end = i + b.lengths[bag]; i < end; ++i) {
        const float* row = b.rows + b.index[i] * b.dim;
        float* out = gr + b.index[i] * b.dim;
        const float w = b.weights ? b.weights[i] : 1.0f;
        float dw = 0;
        for (int64_t d = 0; d < b.dim; ++d) {
          // d/d row of w row + (w row)^2: w g + 2 w^2 row g_sq.
          const float sq_term = g_sq ? 2.0f * w * row[d] * g_sq[d] : 0.0f;
          out[d] += w * (g[d] + sq_term);
          dw += row[d] * (g[d] + sq_term);
        }
        if (weight_grad) gw[i] = dw;
      }
    }
  }
  return py::make_tuple(grad_rows, weight_grad ? py::object(grad_weights) : py::object(py::none()));
}

}  // namespace

void AddBagSums(py::module_& m) {
  m.def("bag_sums", &Forward, py::arg("rows"), py::arg("index"), py::arg("weights"),
        py::arg("lengths"), py::arg("squares") = false,
        "(sums, squares): per bag (lengths[b] consecutive occurrences) the sum of "
        "weights[i] * rows[index[i]], and if squares the sum of its elementwise squares.");
  m.def("bag_sums_backward", &Backward, py::arg("grad_sums"), py::arg("grad_squares"),
        py::arg("rows"), py::arg("index"), py::arg("weights"), py::arg("lengths"),
        py::arg("weight_grad") = false,
        "(grad_rows, grad_weights) of bag_sums for the bags' gradients: one row per "
        "unique key, summed over its occurrences.");
}

}  // namespace libra::python
