// Composite ops on bfloat16/float16: PyTorch computes such an op in float32 and rounds its result
// once, while a composite of several ops would round after each of them. The composites widen their
// reduced-precision inputs with `widened` and narrow the result back with `narrowed`.
#pragma once

#include "tessera/dtype.hpp"
#include "tessera/tensor.hpp"

namespace tessera::detail {

inline Tensor widened(const Tensor& t) {
  return t.defined() && is_reduced_float(t.dtype()) ? t.to(kFloat32) : t;
}

inline Tensor narrowed(const Tensor& result, DType dtype) {
  return is_reduced_float(dtype) && result.dtype() != dtype ? result.to(dtype) : result;
}

}  // namespace tessera::detail
