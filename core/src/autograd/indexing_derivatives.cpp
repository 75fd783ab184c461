// Backward formulas of gather and scatter_add (and so of index_select and embedding, built on
// gather). gather's backward adds each output gradient into a zero tensor at the position it was
// read from: a scatter_add, whose kernel adds in one fixed order, so gradients of repeated indices
// (an embedding row used twice) sum the same way every time.
#include "autograd/derivatives.hpp"
#include "autograd/record.hpp"
#include "tensor/internal.hpp"
#include "tessera/detail/spmd.hpp"
#include "tessera/ops.hpp"

namespace tessera::autograd {
namespace {

// Zeros of `shape` on the backend and of the dtype of `like` (a dense shard).
Tensor zeros_on(const Tensor& like, const Shape& shape) {
  Tensor z = detail::empty_like_on(detail::impl_of(like, "GatherBackward"), shape, like.dtype());
  detail::fill_dense(*z.impl(), Scalar(0));
  return z;
}

}  // namespace

void record_gather(const Tensor& a, int64_t dim, const Tensor& index, const Tensor& out) {
  const SymShape shape = a.shape();
  record("GatherBackward", {a}, {out}, [=](std::vector<Tensor>& grads) -> std::vector<Tensor> {
    const Tensor zeros = detail::spmd(
        "GatherBackward", [](const Tensor& g, const SymShape& s) { return zeros_on(g, s.to_shape()); },
        grads[0], shape);
    return {scatter_add(zeros, dim, index, grads[0])};
  });
}

void record_scatter_add(const Tensor& a, int64_t dim, const Tensor& index, const Tensor& src,
                        const Tensor& out) {
  record("ScatterAddBackward", {a, src}, {out}, [=](std::vector<Tensor>& grads) -> std::vector<Tensor> {
    return {grads[0], gather(grads[0], dim, index)};
  });
}

}  // namespace tessera::autograd
