// The fused sparse op of libra.torch (module libra._libra): per bag, the
// weighted sum of its keys' rows and, for factorization machines, the
// weighted sum of their squares; and the backward that scatters a bag
// gradient into one gradient row per unique key. A batch of a CTR model has
// tens of thousands of feature occurrences; PyTorch's CPU autograd over them
// (gather, multiply, segment sums and their backwards) costs several times
// this one pass over the occurrences (docs/PERFORMANCE.md).
#pragma once

#include <pybind11/pybind11.h>

namespace libra::python {

void AddBagSums(pybind11::module_& m);

}  // namespace libra::python
