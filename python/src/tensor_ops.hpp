// Tensor arithmetic, comparisons, reductions and elementwise functions, as Tensor methods and
// operators (bind_tensor_ops) and as module functions (bind_ops), both in tensor_ops.cpp.
#pragma once

#include "bindings.hpp"

namespace tessera::python {

void bind_tensor_ops(nb::class_<Tensor>& tensor);

}  // namespace tessera::python
