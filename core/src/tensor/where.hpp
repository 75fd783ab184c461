// The dense core of where: shared by where, masked_fill, tril and triu, which differ only in how
// they pick the result dtype and what autograd records.
#pragma once

#include "tessera/dtype.hpp"
#include "tessera/scalar.hpp"
#include "tessera/tensor.hpp"

namespace tessera::detail {

// cond ? a : b element by element for dense tensors on one backend: cond must be bool, the three
// broadcast together, and a and b are cast to `dtype` (the result's) first. No autograd.
Tensor where_as(const Tensor& cond, const Tensor& a, const Tensor& b, DType dtype, const char* op);
// A scalar operand as a 0-d tensor of `dtype` on `like`'s backend.
Tensor scalar_on(const Tensor& like, const Scalar& value, DType dtype);

}  // namespace tessera::detail
