// tril / triu over the last two dims (batched over the others): the elements on the kept side of
// the `diagonal`-th diagonal stay, the others become zero. The mask compares column minus row with
// the diagonal (PyTorch's reference decomposition), built on the tensor's own backend.
#include <fmt/format.h>

#include "autograd/record.hpp"
#include "dispatch/user_call.hpp"
#include "tensor/internal.hpp"
#include "tensor/where.hpp"
#include "tessera/detail/spmd.hpp"
#include "tessera/errors.hpp"
#include "tessera/ops.hpp"

namespace tessera {
namespace {

// 0, 1, ..., n - 1 (int64) on `like`'s backend; made here rather than by ts::arange, which inside a
// LocalMode would make a local tensor where this op works on one rank's dense shard.
Tensor index_column(const TensorImpl& like, int64_t n) {
  Tensor out = detail::empty_like_on(like, {n}, kInt64);
  dispatch::call_kernel("arange", kInt64, {}, {dispatch::operand(*out.impl())},
                        {dispatch::Attr::integer("start", 0), dispatch::Attr::integer("step", 1)});
  return out;
}

Tensor triangle_dense(const char* op, bool lower, const Tensor& x, int64_t diagonal) {
  const TensorImpl& in = detail::impl_of(x, op);
  if (in.sizes().size() < 2)
    throw Error(fmt::format(
        "{}: the input has {} dims (shape {}), expected at least 2 (the last two form the matrix)", op,
        in.sizes().size(), shape_text(in.sizes())));
  const int64_t rows = in.sizes()[in.sizes().size() - 2];
  const int64_t cols = in.sizes().back();
  const Tensor offset = index_column(in, cols).reshape({1, cols}) - index_column(in, rows).reshape({rows, 1});
  const Tensor keep = lower ? le(offset, diagonal) : ge(offset, diagonal);
  return detail::where_as(keep, x, detail::scalar_on(x, 0, in.dtype()), in.dtype(), op);
}

Tensor triangle_op(const char* op, bool lower, const Tensor& x, int64_t diagonal) {
  auto forward = [&] {
    return detail::spmd_pure(
        op, [op, lower, diagonal](const Tensor& t) { return triangle_dense(op, lower, t, diagonal); }, x);
  };
  return autograd::differentiable(
      forward,
      [&](const Tensor& out) {
        autograd::record(lower ? "TrilBackward" : "TriuBackward", {x}, {out},
                         [lower, diagonal](std::vector<Tensor>& grads) -> std::vector<Tensor> {
                           return {lower ? tril(grads[0], diagonal) : triu(grads[0], diagonal)};
                         });
      },
      x);
}

}  // namespace

Tensor tril(const Tensor& x, int64_t diagonal) {
  const dispatch::UserCall call("ts::tril");
  return triangle_op("tril", true, x, diagonal);
}
Tensor triu(const Tensor& x, int64_t diagonal) {
  const dispatch::UserCall call("ts::triu");
  return triangle_op("triu", false, x, diagonal);
}

}  // namespace tessera
