// Python indexing of a Tensor (tensor_indexing.cpp).
#pragma once

#include "bindings.hpp"

namespace tessera::python {

Tensor index_tensor(const Tensor& t, nb::handle key);
void assign_index(Tensor& t, nb::handle key, nb::handle value);

}  // namespace tessera::python
