// where(cond, a, b) and masked_fill: one "where" kernel over the three operands broadcast together.
// where promotes a and b as a binary op does (PyTorch's result_type); masked_fill keeps the
// tensor's dtype and casts the fill value to it, as PyTorch does.
#include "tensor/where.hpp"

#include <fmt/format.h>

#include <array>
#include <span>

#include "autograd/record.hpp"
#include "dispatch/user_call.hpp"
#include "tensor/internal.hpp"
#include "tensor/type_promotion.hpp"
#include "tessera/detail/spmd.hpp"
#include "tessera/errors.hpp"
#include "tessera/ops.hpp"

namespace tessera {
namespace detail {

Tensor scalar_on(const Tensor& like, const Scalar& value, DType dtype) {
  Tensor out = empty_like_on(impl_of(like, "scalar operand"), {}, dtype);
  fill_dense(*out.impl(), value);
  return out;
}

Tensor where_as(const Tensor& cond, const Tensor& a, const Tensor& b, DType dtype, const char* op) {
  const TensorImpl& ic = impl_of(cond, op);
  if (ic.dtype() != kBool)
    throw Error(
        fmt::format("{}: the condition (mask) has dtype {}, expected bool", op, dtype_name(ic.dtype())));
  const Tensor ca = a.to(dtype);
  const Tensor cb = b.to(dtype);
  const TensorImpl& ia = impl_of(ca, op);
  const TensorImpl& ib = impl_of(cb, op);
  const Shape shape = broadcast_shapes(broadcast_shapes(ic.sizes(), ia.sizes(), op), ib.sizes(), op);
  std::array<std::vector<int64_t>, 3> strides = {broadcast_strides(ic, shape), broadcast_strides(ia, shape),
                                                 broadcast_strides(ib, shape)};
  Tensor out = empty_like_on(ia, shape, dtype);
  dispatch::call_kernel("where", dtype,
                        {dispatch::operand(ic, shape, strides[0]), dispatch::operand(ia, shape, strides[1]),
                         dispatch::operand(ib, shape, strides[2])},
                        {dispatch::operand(*out.impl())});
  return out;
}

}  // namespace detail

namespace {

// The gradient of the chosen side: g where cond picks it, zero elsewhere, summed back to the
// operand's shape when it was broadcast.
Tensor chosen(const Tensor& cond, const Tensor& g, bool first, const std::optional<SymShape>& shape) {
  return autograd::sum_to(first ? where(cond, g, Scalar(0)) : where(cond, Scalar(0), g), shape);
}

void record_where(const Tensor& cond, const Tensor& a, const Tensor& b, const Tensor& out) {
  const bool need_a = autograd::requires_grad(a), need_b = autograd::requires_grad(b);
  const std::optional<SymShape> shape_a = autograd::broadcast_from(a, out),
                                shape_b = autograd::broadcast_from(b, out);
  const autograd::SavedTensor saved_cond(cond, false);
  autograd::record("WhereBackward", {a, b}, {out}, [=](std::vector<Tensor>& grads) -> std::vector<Tensor> {
    const Tensor c = saved_cond.unpack("WhereBackward");
    return {need_a ? chosen(c, grads[0], true, shape_a) : Tensor(),
            need_b ? chosen(c, grads[0], false, shape_b) : Tensor()};
  });
}

void record_where_scalar(const Tensor& cond, const Tensor& t, bool tensor_first, const Tensor& out) {
  const std::optional<SymShape> shape = autograd::broadcast_from(t, out);
  const autograd::SavedTensor saved_cond(cond, false);
  autograd::record("WhereBackward", {t}, {out}, [=](std::vector<Tensor>& grads) -> std::vector<Tensor> {
    return {chosen(saved_cond.unpack("WhereBackward"), grads[0], tensor_first, shape)};
  });
}

Tensor where_dense(const Tensor& cond, const Tensor& a, const Tensor& b) {
  const DType dtype =
      detail::ResultType().add(detail::impl_of(a, "where")).add(detail::impl_of(b, "where")).result();
  return detail::where_as(cond, a, b, dtype, "where");
}

}  // namespace

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  return autograd::differentiable([&] { return detail::spmd_pure("where", where_dense, cond, a, b); },
                                  [&](const Tensor& out) { record_where(cond, a, b, out); }, a, b);
}

Tensor where(const Tensor& cond, const Tensor& a, Scalar b) {
  auto forward = [&] {
    return detail::spmd_pure(
        "where",
        [](const Tensor& c, const Tensor& x, const Scalar& s) {
          const DType dtype = detail::ResultType().add(detail::impl_of(x, "where")).add(s).result();
          return detail::where_as(c, x, detail::scalar_on(x, s, dtype), dtype, "where");
        },
        cond, a, b);
  };
  return autograd::differentiable(
      forward, [&](const Tensor& out) { record_where_scalar(cond, a, true, out); }, a);
}

Tensor where(const Tensor& cond, Scalar a, const Tensor& b) {
  auto forward = [&] {
    return detail::spmd_pure(
        "where",
        [](const Tensor& c, const Scalar& s, const Tensor& y) {
          const DType dtype = detail::ResultType().add(s).add(detail::impl_of(y, "where")).result();
          return detail::where_as(c, detail::scalar_on(y, s, dtype), y, dtype, "where");
        },
        cond, a, b);
  };
  return autograd::differentiable(
      forward, [&](const Tensor& out) { record_where_scalar(cond, b, false, out); }, b);
}

Tensor where(const Tensor& cond, Scalar a, Scalar b) {
  return detail::spmd_pure(
      "where",
      [](const Tensor& c, const Scalar& x, const Scalar& y) {
        const DType dtype = detail::ResultType().add(x).add(y).result();
        return detail::where_as(c, detail::scalar_on(c, x, dtype), detail::scalar_on(c, y, dtype), dtype,
                                "where");
      },
      cond, a, b);
}

namespace {

// PyTorch's masked_fill never grows the tensor: the mask must broadcast to its shape.
Tensor masked_fill_dense(const Tensor& x, const Tensor& mask, const Tensor& value) {
  const TensorImpl& ix = detail::impl_of(x, "masked_fill");
  const TensorImpl& im = detail::impl_of(mask, "masked_fill");
  if (detail::broadcast_shapes(ix.sizes(), im.sizes(), "masked_fill") != ix.sizes())
    throw Error(fmt::format("masked_fill: the mask's shape {} does not broadcast to the tensor's shape {}",
                            shape_text(im.sizes()), shape_text(ix.sizes())));
  return detail::where_as(mask, value, x, ix.dtype(), "masked_fill");
}

}  // namespace

Tensor masked_fill(const Tensor& x, const Tensor& mask, Scalar value) {
  const dispatch::UserCall call("ts::masked_fill");
  auto forward = [&] {
    return detail::spmd_pure(
        "masked_fill",
        [](const Tensor& t, const Tensor& m, const Scalar& v) {
          return masked_fill_dense(t, m, detail::scalar_on(t, v, detail::impl_of(t, "masked_fill").dtype()));
        },
        x, mask, value);
  };
  return autograd::differentiable(
      forward, [&](const Tensor& out) { record_where_scalar(mask, x, false, out); }, x);
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, const Tensor& value) {
  if (value.dim() != 0)
    throw Error(fmt::format("masked_fill: the value must be a 0-d tensor, got {} dims", value.dim()));
  auto forward = [&] { return detail::spmd_pure("masked_fill", masked_fill_dense, x, mask, value); };
  return autograd::differentiable(
      forward, [&](const Tensor& out) { record_where(mask, value, x, out); }, x, value);
}

}  // namespace tessera
