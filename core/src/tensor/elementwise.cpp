// Element-wise operations: promote, broadcast, run one kernel.
#include <fmt/format.h>

#include <array>
#include <span>

#include "autograd/derivatives.hpp"
#include "autograd/record.hpp"
#include "tensor/internal.hpp"
#include "tensor/type_promotion.hpp"
#include "tessera/detail/spmd.hpp"
#include "tessera/errors.hpp"
#include "tessera/ops.hpp"

namespace tessera {
namespace {

using detail::impl_of;

enum class BinaryKind { Arithmetic, TrueDivision, Comparison };

// `t` as `dtype`: its own implementation when it has that dtype already, else a converted copy's,
// which `converted` keeps alive.
const TensorImpl& as_dtype(const Tensor& t, DType dtype, Tensor& converted, const char* op) {
  const TensorImpl& impl = impl_of(t, op);
  if (impl.dtype() == dtype) return impl;
  converted = t.to(dtype);
  return *converted.impl();
}

Tensor binary(const char* op, BinaryKind kind, DType result, const Tensor& a, const Tensor& b) {
  DType compute = result;
  if (kind == BinaryKind::TrueDivision && !is_floating(compute)) compute = kDefaultFloat;
  Tensor converted_a;
  Tensor converted_b;
  const TensorImpl& ia = as_dtype(a, compute, converted_a, op);
  const TensorImpl& ib = as_dtype(b, compute, converted_b, op);
  const DType out_dtype = kind == BinaryKind::Comparison ? kBool : compute;
  if (ia.sizes() == ib.sizes()) {
    // Operands of one shape (the common case) need no broadcast views: their own layouts are it.
    Tensor out = detail::empty_like_on(ia, ia.sizes(), out_dtype);
    dispatch::call_kernel(op, compute, {dispatch::operand(ia), dispatch::operand(ib)},
                          {dispatch::operand(*out.impl())});
    return out;
  }
  Shape shape = detail::broadcast_shapes(ia.sizes(), ib.sizes(), op);
  // Neither operand has more than kMaxDims dims, so neither has the broadcast shape.
  std::array<int64_t, kMaxDims> sa;
  std::array<int64_t, kMaxDims> sb;
  detail::broadcast_strides(ia, shape, sa.data());
  detail::broadcast_strides(ib, shape, sb.data());
  Tensor out = detail::empty_like_on(ia, std::move(shape), out_dtype);
  const Shape& sizes = out.impl()->sizes();
  dispatch::call_kernel(op, compute,
                        {dispatch::operand(ia, sizes, std::span(sa.data(), sizes.size())),
                         dispatch::operand(ib, sizes, std::span(sb.data(), sizes.size()))},
                        {dispatch::operand(*out.impl())});
  return out;
}

Tensor binary(const char* op, BinaryKind kind, const Tensor& a, const Tensor& b) {
  const TensorImpl& ia = impl_of(a, op);
  const TensorImpl& ib = impl_of(b, op);
  return binary(op, kind, detail::ResultType().add(ia).add(ib).result(), a, b);
}

// A scalar operand becomes a 0-d tensor of the result dtype on the tensor's backend.
Tensor scalar_like(const Tensor& t, Scalar s, DType dtype) {
  Tensor out = detail::empty_like_on(impl_of(t, "scalar operand"), {}, dtype);
  detail::fill_dense(*out.impl(), s);
  return out;
}

Tensor binary(const char* op, BinaryKind kind, const Tensor& a, Scalar b) {
  const DType result = detail::ResultType().add(impl_of(a, op)).add(b).result();
  return binary(op, kind, result, a, scalar_like(a, b, result));
}

Tensor binary(const char* op, BinaryKind kind, Scalar a, const Tensor& b) {
  const DType result = detail::ResultType().add(a).add(impl_of(b, op)).result();
  return binary(op, kind, result, scalar_like(b, a, result), b);
}

// Unary ops that are only defined on floats compute integer and bool inputs as float32.
Tensor unary(const char* op, const Tensor& a, bool float_only) {
  const TensorImpl& self = impl_of(a, op);
  const Tensor input = float_only && !is_floating(self.dtype()) ? a.to(kDefaultFloat) : a;
  const TensorImpl& in = *input.impl();
  Tensor out = detail::empty_like_on(in, in.sizes(), in.dtype());
  dispatch::call_kernel(op, in.dtype(), {dispatch::operand(in)}, {dispatch::operand(*out.impl())});
  return out;
}

// A plain scalar with a local tensor: the scalar's 0-d tensor is made once for all ranks, which
// only read it, instead of once per rank. Its dtype (the result's) is the same on every rank when
// every shard has the same dtype, promotion category (0-d or not) and backend; otherwise (rare)
// each rank makes its own.
Tensor local_with_scalar(const char* op, BinaryKind kind, const Tensor& t, const Scalar& s,
                         bool scalar_first) {
  const Tensor& first = t.shards().begin()->second;
  for (const auto& [rank, shard] : t.shards())
    if (shard.dtype() != first.dtype() || (shard.dim() == 0) != (first.dim() == 0) ||
        shard.backend() != first.backend()) {
      if (scalar_first)
        return detail::spmd_pure(
            op, [&](const Tensor& x) { return binary(op, kind, s, x); }, t);
      return detail::spmd_pure(
          op, [&](const Tensor& x) { return binary(op, kind, x, s); }, t);
    }
  const DType result = detail::ResultType().add(first).add(s).result();
  const Tensor scalar = scalar_like(first, s, result);
  return detail::spmd_pure(
      op,
      [&](const Tensor& x) {
        return scalar_first ? binary(op, kind, result, scalar, x) : binary(op, kind, result, x, scalar);
      },
      t);
}

}  // namespace

// Dense arguments go straight to the kernel path; with a local argument detail::spmd runs the op per rank.
// Comparisons give bool tensors, which carry no gradient: they are never recorded.
// `name` is the function's name there, which cannot take parentheses.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define TESSERA_BINARY(name, kind, differentiable_op)                                                     \
  Tensor name(const Tensor& a, const Tensor& b) {                                                         \
    auto forward = [&] {                                                                                  \
      if (!a.is_local() && !b.is_local()) return binary(#name, kind, a, b);                               \
      return detail::spmd_pure(                                                                           \
          #name, [](const Tensor& x, const Tensor& y) { return binary(#name, kind, x, y); }, a, b);       \
    };                                                                                                    \
    if (!differentiable_op) return forward();                                                             \
    return autograd::differentiable(                                                                      \
        forward, [&](const Tensor& out) { autograd::record_binary(#name, a, b, out); }, a, b);            \
  }                                                                                                       \
  Tensor name(const Tensor& a, Scalar b) {                                                                \
    auto forward = [&] {                                                                                  \
      if (!a.is_local() && !b.is_local()) return binary(#name, kind, a, b);                               \
      if (a.is_local() && !b.is_local()) return local_with_scalar(#name, kind, a, b, false);              \
      return detail::spmd_pure(                                                                           \
          #name, [](const Tensor& x, const Scalar& y) { return binary(#name, kind, x, y); }, a, b);       \
    };                                                                                                    \
    if (!differentiable_op) return forward();                                                             \
    return autograd::differentiable(                                                                      \
        forward, [&](const Tensor& out) { autograd::record_binary_scalar(#name, a, b, false, out); }, a); \
  }                                                                                                       \
  Tensor name(Scalar a, const Tensor& b) {                                                                \
    auto forward = [&] {                                                                                  \
      if (!a.is_local() && !b.is_local()) return binary(#name, kind, a, b);                               \
      if (b.is_local() && !a.is_local()) return local_with_scalar(#name, kind, b, a, true);               \
      return detail::spmd_pure(                                                                           \
          #name, [](const Scalar& x, const Tensor& y) { return binary(#name, kind, x, y); }, a, b);       \
    };                                                                                                    \
    if (!differentiable_op) return forward();                                                             \
    return autograd::differentiable(                                                                      \
        forward, [&](const Tensor& out) { autograd::record_binary_scalar(#name, b, a, true, out); }, b);  \
  }

TESSERA_BINARY(add, BinaryKind::Arithmetic, true)
TESSERA_BINARY(sub, BinaryKind::Arithmetic, true)
TESSERA_BINARY(mul, BinaryKind::Arithmetic, true)
TESSERA_BINARY(div, BinaryKind::TrueDivision, true)
TESSERA_BINARY(pow, BinaryKind::Arithmetic, true)
TESSERA_BINARY(maximum, BinaryKind::Arithmetic, true)
TESSERA_BINARY(minimum, BinaryKind::Arithmetic, true)
TESSERA_BINARY(eq, BinaryKind::Comparison, false)
TESSERA_BINARY(ne, BinaryKind::Comparison, false)
TESSERA_BINARY(lt, BinaryKind::Comparison, false)
TESSERA_BINARY(le, BinaryKind::Comparison, false)
TESSERA_BINARY(gt, BinaryKind::Comparison, false)
TESSERA_BINARY(ge, BinaryKind::Comparison, false)
#undef TESSERA_BINARY
// NOLINTEND(bugprone-macro-parentheses)

#define TESSERA_UNARY(name, float_only)                                                 \
  Tensor name(const Tensor& a) {                                                        \
    auto forward = [&] {                                                                \
      return detail::spmd_pure(                                                         \
          #name, [](const Tensor& x) { return unary(#name, x, float_only); }, a);       \
    };                                                                                  \
    return autograd::differentiable(                                                    \
        forward, [&](const Tensor& out) { autograd::record_unary(#name, a, out); }, a); \
  }

TESSERA_UNARY(neg, false)
TESSERA_UNARY(abs, false)
TESSERA_UNARY(relu, false)
TESSERA_UNARY(exp, true)
TESSERA_UNARY(log, true)
TESSERA_UNARY(sqrt, true)
TESSERA_UNARY(gelu, true)
TESSERA_UNARY(tanh, true)
TESSERA_UNARY(sigmoid, true)
#undef TESSERA_UNARY

namespace detail {
Tensor gelu_grad(const Tensor& a) {
  return spmd_pure(
      "gelu_grad", [](const Tensor& x) { return unary("gelu_grad", x, true); }, a);
}
}  // namespace detail

}  // namespace tessera
