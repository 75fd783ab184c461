// softmax / log_softmax: move the dim last, run the row kernel, move it back.
#include <fmt/format.h>

#include "autograd/derivatives.hpp"
#include "autograd/record.hpp"
#include "tensor/internal.hpp"
#include "tessera/detail/spmd.hpp"
#include "tessera/errors.hpp"
#include "tessera/ops.hpp"

namespace tessera {
namespace {

Tensor row_op(const char* op, const Tensor& a, int64_t dim) {
  const TensorImpl& self = detail::impl_of(a, op);
  const Tensor input = is_floating(self.dtype()) ? a : a.to(kDefaultFloat);
  // Checked before a 0-d input is viewed as 1-d: only dims 0 and -1 name its one implicit dim.
  const int64_t d = normalize_dim(dim, input.dim(), op);
  if (input.dim() == 0) return row_op(op, input.reshape({1}), 0).reshape({});
  const int64_t last = input.dim() - 1;
  const Tensor moved = input.transpose(d, last);
  const TensorImpl& in = *moved.impl();
  Tensor out = detail::empty_like_on(in, in.sizes(), in.dtype());
  dispatch::call_kernel(op, in.dtype(), {dispatch::operand(in)}, {dispatch::operand(*out.impl())});
  return out.transpose(d, last).contiguous();
}

}  // namespace

Tensor softmax(const Tensor& a, int64_t dim) {
  return autograd::differentiable(
      [&] {
        return detail::spmd_pure(
            "softmax", [dim](const Tensor& x) { return row_op("softmax", x, dim); }, a);
      },
      [&](const Tensor& out) { autograd::record_softmax(false, a, dim, out); }, a);
}
Tensor log_softmax(const Tensor& a, int64_t dim) {
  return autograd::differentiable(
      [&] {
        return detail::spmd_pure(
            "log_softmax", [dim](const Tensor& x) { return row_op("log_softmax", x, dim); }, a);
      },
      [&](const Tensor& out) { autograd::record_softmax(true, a, dim, out); }, a);
}

}  // namespace tessera
