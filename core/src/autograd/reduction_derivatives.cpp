// Backward formulas of the reductions. Per rank for local tensors (ranks may reduce different
// numbers of elements). max and min share the gradient evenly among tied extremes, as PyTorch's
// max()/amax do.
#include <cstring>

#include "autograd/derivatives.hpp"
#include "autograd/record.hpp"
#include "tensor/tensor_impl.hpp"
#include "tessera/detail/spmd.hpp"
#include "tessera/ops.hpp"

namespace tessera::autograd {
namespace {

// Which dims of an `ndim`-d tensor the reduction removed (every dim when `dims` is empty).
std::vector<bool> reduced_dims(const std::vector<int64_t>& dims, int64_t ndim, const char* op) {
  std::vector<bool> reduced(static_cast<size_t>(ndim), dims.empty());
  for (int64_t d : dims)
    if (ndim > 0) reduced[static_cast<size_t>(normalize_dim(d, ndim, op))] = true;
  return reduced;
}

// `t` (shaped like the reduction's output) as the input's shape: reduced dims brought back as 1
// and then broadcast.
Tensor spread_back(const Tensor& t, const Shape& input, const std::vector<bool>& reduced) {
  Shape keepdim_shape = input;
  for (size_t d = 0; d < input.size(); ++d)
    if (reduced[d]) keepdim_shape[d] = 1;
  return t.reshape(keepdim_shape).expand(input);
}

const char* node_name(const char* op) {
  if (is(op, "sum")) return "SumBackward";
  if (is(op, "mean")) return "MeanBackward";
  if (is(op, "prod")) return "ProdBackward";
  if (is(op, "max")) return "MaxBackward";
  return "MinBackward";
}

// d prod / d x_i = product of the others: out / x_i without zeros; with one zero in the slice
// only that element's is non-zero (the product of the rest); with more, all are zero.
Tensor prod_grad(const Tensor& grad, const Tensor& a, const Tensor& out, const std::vector<bool>& reduced,
                 const std::vector<int64_t>& dims) {
  const Shape& input = a.sizes();
  const Tensor is_zero = eq(a, 0).to(a.dtype());
  const Tensor zero_count = spread_back(sum(is_zero, dims, true), input, reduced);
  const Tensor nonzero_product = spread_back(prod(a + is_zero, dims, true), input, reduced);
  const Tensor g = spread_back(grad, input, reduced);
  const Tensor without_zeros = spread_back(out, input, reduced) / (a + is_zero);
  const Tensor single_zero = is_zero * eq(zero_count, 1).to(a.dtype()) * nonzero_product;
  return g * (without_zeros * (1 - is_zero) + single_zero);
}

}  // namespace

void record_reduction(const char* op, const Tensor& a, const std::vector<int64_t>& dims, const Tensor& out) {
  const char* name = node_name(op);
  const std::vector<bool> reduced = reduced_dims(dims, a.dim(), op);
  std::vector<int64_t> all_dims;
  for (size_t d = 0; d < reduced.size(); ++d)
    if (reduced[d]) all_dims.push_back(static_cast<int64_t>(d));
  const SymShape shape = a.shape();
  const bool reads_values = is(op, "prod") || is(op, "max") || is(op, "min");
  const SavedTensor saved_a = reads_values ? SavedTensor(a, false) : SavedTensor();
  const SavedTensor saved_out = reads_values ? SavedTensor(out, true) : SavedTensor();
  record(name, {a}, {out}, [=](std::vector<Tensor>& grads) -> std::vector<Tensor> {
    if (is(op, "sum") || is(op, "mean"))
      return {detail::spmd(
          name,
          [&](const Tensor& g, const SymShape& s) {
            const Shape input = s.to_shape();
            Tensor spread = spread_back(g, input, reduced);
            if (is(op, "sum")) return spread;
            int64_t count = 1;
            for (size_t d = 0; d < input.size(); ++d)
              if (reduced[d]) count *= input[d];
            return spread / count;
          },
          grads[0], shape)};
    const Tensor va = saved_a.unpack(name), vo = saved_out.unpack(name);
    if (is(op, "prod"))
      return {detail::spmd(
          name,
          [&](const Tensor& g, const Tensor& x, const Tensor& o) {
            return prod_grad(g, x, o, reduced, all_dims);
          },
          grads[0], va, vo)};
    return {detail::spmd(
        name,
        [&](const Tensor& g, const Tensor& x, const Tensor& o) {
          const Tensor ties = eq(x, spread_back(o, x.sizes(), reduced)).to(g.dtype());
          const Tensor share = g / sum(ties, all_dims, true).reshape(o.sizes());
          return ties * spread_back(share, x.sizes(), reduced);
        },
        grads[0], va, vo)};
  });
}

}  // namespace tessera::autograd
