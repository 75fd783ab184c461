// Reductions: view the input as [kept dims..., reduced dims...] and run one kernel.
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

enum class OutDType { Same, Int64ForIntegral, Int64, Bool };

Tensor reduce_dense(const char* op, const Tensor& a, const std::vector<int64_t>& dims, bool keepdim,
                    OutDType rule) {
  const TensorImpl& self = impl_of(a, op);
  const int64_t ndim = self.dim();
  std::vector<bool> reduced(static_cast<size_t>(ndim), dims.empty());
  for (int64_t dim : dims) {
    const auto d = static_cast<size_t>(normalize_dim(dim, ndim, op));
    if (ndim > 0 && reduced[d])
      throw Error(fmt::format("{}: dim {} appears twice in {}", op, d, shape_text(dims)));
    if (ndim > 0) reduced[d] = true;
  }

  // Kept dims first, reduced dims last, each in their original order.
  Shape sizes, strides, out_shape, keepdim_shape;
  for (int pass = 0; pass < 2; ++pass)
    for (size_t d = 0; d < static_cast<size_t>(ndim); ++d)
      if (reduced[d] == (pass == 1)) {
        sizes.push_back(self.sizes()[d]);
        strides.push_back(self.strides()[d]);
        if (pass == 0) out_shape.push_back(self.sizes()[d]);
      }
  for (size_t d = 0; d < static_cast<size_t>(ndim); ++d)
    keepdim_shape.push_back(reduced[d] ? 1 : self.sizes()[d]);
  const int64_t reduce_ndim = static_cast<int64_t>(sizes.size() - out_shape.size());

  DType out_dtype = self.dtype();
  if (rule == OutDType::Int64 || (rule == OutDType::Int64ForIntegral && !is_floating(self.dtype())))
    out_dtype = kInt64;
  if (rule == OutDType::Bool) out_dtype = kBool;
  Tensor out = detail::empty_like_on(self, keepdim ? keepdim_shape : out_shape, out_dtype);
  dispatch::call_kernel(op, self.dtype(), {dispatch::operand(self, sizes, strides)},
                        {dispatch::operand(*out.impl())},
                        {dispatch::Attr::integer("reduce_ndim", reduce_ndim)});
  return out;
}

Tensor reduce(const char* op, const Tensor& a, const std::vector<int64_t>& dims, bool keepdim,
              OutDType rule) {
  return detail::spmd_pure(
      op, [&](const Tensor& x) { return reduce_dense(op, x, dims, keepdim, rule); }, a);
}

// The reductions with a gradient (sum, mean, prod, max, min).
Tensor differentiable_reduce(const char* op, const Tensor& a, const std::vector<int64_t>& dims, bool keepdim,
                             OutDType rule) {
  return autograd::differentiable([&] { return reduce(op, a, dims, keepdim, rule); },
                                  [&](const Tensor& out) { autograd::record_reduction(op, a, dims, out); },
                                  a);
}

void require_floating(const char* op, const Tensor& a) {
  if (!a.defined()) impl_of(a, op);
  if (!is_floating(a.dtype()))
    throw Error(
        fmt::format("{}: input dtype {} is not supported; expected float32 or float64 (convert with "
                    ".to(kFloat32) first)",
                    op, dtype_name(a.dtype())));
}

Tensor as_bool(const Tensor& a) { return a.to(kBool); }

}  // namespace

Tensor sum(const Tensor& a, const std::vector<int64_t>& dims, bool keepdim) {
  return differentiable_reduce("sum", a, dims, keepdim, OutDType::Int64ForIntegral);
}
Tensor prod(const Tensor& a, const std::vector<int64_t>& dims, bool keepdim) {
  return differentiable_reduce("prod", a, dims, keepdim, OutDType::Int64ForIntegral);
}
Tensor mean(const Tensor& a, const std::vector<int64_t>& dims, bool keepdim) {
  require_floating("mean", a);
  return differentiable_reduce("mean", a, dims, keepdim, OutDType::Same);
}
Tensor max(const Tensor& a, const std::vector<int64_t>& dims, bool keepdim) {
  return differentiable_reduce("max", a, dims, keepdim, OutDType::Same);
}
Tensor min(const Tensor& a, const std::vector<int64_t>& dims, bool keepdim) {
  return differentiable_reduce("min", a, dims, keepdim, OutDType::Same);
}
Tensor all(const Tensor& a, const std::vector<int64_t>& dims, bool keepdim) {
  return reduce("all", as_bool(a), dims, keepdim, OutDType::Bool);
}
Tensor any(const Tensor& a, const std::vector<int64_t>& dims, bool keepdim) {
  return reduce("any", as_bool(a), dims, keepdim, OutDType::Bool);
}
Tensor argmax(const Tensor& a) { return reduce("argmax", a.reshape({-1}), {}, false, OutDType::Int64); }
Tensor argmin(const Tensor& a) { return reduce("argmin", a.reshape({-1}), {}, false, OutDType::Int64); }
Tensor argmax(const Tensor& a, int64_t dim, bool keepdim) {
  return reduce("argmax", a, {dim}, keepdim, OutDType::Int64);
}
Tensor argmin(const Tensor& a, int64_t dim, bool keepdim) {
  return reduce("argmin", a, {dim}, keepdim, OutDType::Int64);
}

}  // namespace tessera
