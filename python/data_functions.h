// The data-side helpers of `import libra` (module libra._libra): reading a
// data set with the C++ trainer's reader, the key mixing and the job plan
// `libra train` uses, and the batch's unique keys that libra.torch's
// embedding pulls. With these a Python trainer sees exactly the rows, keys
// and split of `libra train` on the same file (docs/python.md).
#pragma once

#include <pybind11/pybind11.h>

namespace libra::python {

void AddDataFunctions(pybind11::module_& m);

}  // namespace libra::python
