// cumsum along a dim: the dim is moved last for the row kernel and moved back. Integer and bool
// inputs sum in int64, as PyTorch's do. Its backward is the reversed running sum of the gradient.
#include <fmt/format.h>

#include "autograd/record.hpp"
#include "tensor/internal.hpp"
#include "tessera/detail/spmd.hpp"
#include "tessera/errors.hpp"
#include "tessera/ops.hpp"

namespace tessera {
namespace {

Tensor cumsum_dense(const Tensor& a, int64_t dim) {
  const TensorImpl& self = detail::impl_of(a, "cumsum");
  const Tensor input = is_floating(self.dtype()) ? a : a.to(kInt64);
  const int64_t d = normalize_dim(dim, input.dim(), "cumsum");
  if (input.dim() == 0) return cumsum_dense(input.reshape({1}), 0).reshape({});
  const int64_t last = input.dim() - 1;
  const Tensor moved = input.transpose(d, last);
  const TensorImpl& in = *moved.impl();
  // The result is made in the input's row-major layout and written through the same transposed
  // view, so a cumsum along a leading dim of a contiguous input reads and writes rows side by side
  // (the backend can sum a vector of them a step) and needs no copy back.
  Tensor out = detail::empty_like_on(in, input.sizes(), in.dtype());
  const Tensor out_moved = out.transpose(d, last);
  dispatch::call_kernel("cumsum", in.dtype(), {dispatch::operand(in)},
                        {dispatch::operand(*out_moved.impl())});
  return out;
}

}  // namespace

Tensor cumsum(const Tensor& a, int64_t dim) {
  auto forward = [&] {
    return detail::spmd_pure(
        "cumsum", [dim](const Tensor& x) { return cumsum_dense(x, dim); }, a);
  };
  return autograd::differentiable(
      forward,
      [&](const Tensor& out) {
        // Gradient of a running sum: element j feeds outputs j.. n-1, so its gradient sums those.
        autograd::record("CumsumBackward", {a}, {out},
                         [dim](std::vector<Tensor>& grads) -> std::vector<Tensor> {
                           const Tensor& g = grads[0];
                           if (g.dim() == 0) return {g};
                           return {cumsum(g.flip({dim}), dim).flip({dim})};
                         });
      },
      a);
}

}  // namespace tessera
