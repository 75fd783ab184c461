// gather, scatter_add and index_select: the indexing kernels along one dim. index_select is a
// gather whose index is broadcast over the other dims, so one kernel (and one backward) serves
// both.
#include <fmt/format.h>

#include "autograd/derivatives.hpp"
#include "autograd/record.hpp"
#include "tensor/internal.hpp"
#include "tessera/detail/spmd.hpp"
#include "tessera/errors.hpp"
#include "tessera/ops.hpp"

namespace tessera {
namespace {

using detail::impl_of;

Tensor int64_index(const char* op, const Tensor& index) {
  if (!index.defined()) impl_of(index, op);
  if (index.dtype() != kInt64 && index.dtype() != kInt32)
    throw Error(
        fmt::format("{}: index has dtype {}, expected int64 or int32", op, dtype_name(index.dtype())));
  return index.to(kInt64);
}

void require_same_ndim(const char* op, const Tensor& x, const Tensor& index, const char* index_role) {
  if (x.dim() != index.dim())
    throw Error(fmt::format("{}: {} has {} dims (shape {}), expected {} as the input (shape {})", op,
                            index_role, index.dim(), index.shape().to_string(), x.dim(),
                            x.shape().to_string()));
}

// Every dim of index but `dim` at most the input's (the kernels check it too; checked here so that
// shapes-only backends refuse what computing ones do).
void require_index_fits(const char* op, const Tensor& x, int64_t dim, const Tensor& index) {
  for (int64_t d = 0; d < x.dim(); ++d)
    if (d != dim && index.size(d) > x.size(d))
      throw Error(
          fmt::format("{}: index has shape {}, expected at most {} in dim {} (the input has shape {})", op,
                      shape_text(index.sizes()), x.size(d), d, shape_text(x.sizes())));
}

// The kernels need a dim to index: a 0-d input is seen as 1-d.
Tensor gather_dense(const Tensor& x, int64_t dim, const Tensor& index) {
  if (x.dim() == 0) return gather_dense(x.reshape({1}), 0, index.reshape({1})).reshape({});
  require_index_fits("gather", x, dim, index);
  const TensorImpl& a = impl_of(x, "gather");
  const TensorImpl& k = impl_of(index, "gather");
  Tensor out = detail::empty_like_on(a, k.sizes(), a.dtype());
  dispatch::call_kernel("gather", a.dtype(), {dispatch::operand(a), dispatch::operand(k)},
                        {dispatch::operand(*out.impl())}, {dispatch::Attr::integer("dim", dim)});
  return out;
}

Tensor scatter_add_dense(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  if (x.dim() == 0)
    return scatter_add_dense(x.reshape({1}), 0, index.reshape({1}), src.reshape({1})).reshape({});
  require_index_fits("scatter_add", x, dim, index);
  const TensorImpl& a = impl_of(x, "scatter_add");
  const TensorImpl& k = impl_of(index, "scatter_add");
  const TensorImpl& s = impl_of(src, "scatter_add");
  Tensor out = detail::empty_like_on(a, a.sizes(), a.dtype());
  dispatch::call_kernel("scatter_add", a.dtype(),
                        {dispatch::operand(a), dispatch::operand(k), dispatch::operand(s)},
                        {dispatch::operand(*out.impl())}, {dispatch::Attr::integer("dim", dim)});
  return out;
}

}  // namespace

Tensor gather(const Tensor& x, int64_t dim, const Tensor& index) {
  if (!x.defined()) impl_of(x, "gather");
  const Tensor k = int64_index("gather", index);
  require_same_ndim("gather", x, k, "index");
  const int64_t d = normalize_dim(dim, x.dim(), "gather");
  return autograd::differentiable(
      [&] {
        return detail::spmd_pure(
            "gather", [d](const Tensor& a, const Tensor& i) { return gather_dense(a, d, i); }, x, k);
      },
      [&](const Tensor& out) { autograd::record_gather(x, d, k, out); }, x);
}

Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  if (!x.defined()) impl_of(x, "scatter_add");
  if (!src.defined()) impl_of(src, "scatter_add");
  const Tensor k = int64_index("scatter_add", index);
  require_same_ndim("scatter_add", x, k, "index");
  require_same_ndim("scatter_add", x, src, "src");
  if (src.dtype() != x.dtype())
    throw Error(fmt::format("scatter_add: src has dtype {}, expected the input's dtype {}",
                            dtype_name(src.dtype()), dtype_name(x.dtype())));
  const int64_t d = normalize_dim(dim, x.dim(), "scatter_add");
  detail::spmd(
      "scatter_add",
      [](const Tensor& i, const Tensor& s) {
        for (int64_t j = 0; j < s.dim(); ++j)
          if (s.size(j) < i.size(j))
            throw Error(
                fmt::format("scatter_add: src has shape {}, expected at least index's shape {} in every dim",
                            shape_text(s.sizes()), shape_text(i.sizes())));
      },
      k, src);
  // src may be larger than index (as in PyTorch): only its leading part, index's shape, is added.
  // Narrowing here, as a view with its own backward, gives the rest of src a zero gradient.
  Tensor part = src;
  for (int64_t i = 0; i < x.dim(); ++i) {
    const SymInt want = k.sym_size(i);
    if (src.sym_size(i) != want) part = part.narrow(i, 0, want);
  }
  return autograd::differentiable(
      [&] {
        return detail::spmd_pure(
            "scatter_add",
            [d](const Tensor& a, const Tensor& i, const Tensor& s) { return scatter_add_dense(a, d, i, s); },
            x, k, part);
      },
      [&](const Tensor& out) { autograd::record_scatter_add(x, d, k, part, out); }, x, part);
}

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  if (!x.defined()) impl_of(x, "index_select");
  const Tensor k = int64_index("index_select", index);
  if (k.dim() > 1)
    throw Error(fmt::format("index_select: index has shape {}, expected a 1-d (or 0-d) index",
                            k.shape().to_string()));
  const int64_t d = normalize_dim(dim, x.dim(), "index_select");
  if (x.dim() == 0) return gather(x, 0, k.reshape({}));
  // The index along `d`, broadcast (stride 0) over every other dim of the result. Sizes are
  // SymInts: a local tensor's ranks may hold indices of different lengths.
  const Tensor flat = k.reshape({-1});
  std::vector<SymInt> along(static_cast<size_t>(x.dim()), SymInt(1));
  const SymShape x_shape = x.shape();
  std::vector<SymInt> out(x_shape.begin(), x_shape.end());
  along[static_cast<size_t>(d)] = flat.sym_size(0);
  out[static_cast<size_t>(d)] = flat.sym_size(0);
  return gather(x, d, flat.reshape(SymShape(along)).expand(SymShape(out)));
}

}  // namespace tessera
