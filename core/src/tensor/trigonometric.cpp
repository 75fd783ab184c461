// sin and cos: one kernel each (integer and bool inputs are computed as float32, as PyTorch's).
#include "autograd/record.hpp"
#include "tensor/internal.hpp"
#include "tessera/detail/spmd.hpp"
#include "tessera/ops.hpp"

namespace tessera {
namespace {

Tensor trig_kernel(const char* op, const Tensor& a) {
  const TensorImpl& self = detail::impl_of(a, op);
  const Tensor input = is_floating(self.dtype()) ? a : a.to(kDefaultFloat);
  const TensorImpl& in = *input.impl();
  Tensor out = detail::empty_like_on(in, in.sizes(), in.dtype());
  dispatch::call_kernel(op, in.dtype(), {dispatch::operand(in)}, {dispatch::operand(*out.impl())});
  return out;
}

}  // namespace

Tensor sin(const Tensor& a) {
  auto forward = [&] {
    return detail::spmd_pure(
        "sin", [](const Tensor& x) { return trig_kernel("sin", x); }, a);
  };
  return autograd::differentiable(
      forward,
      [&](const Tensor& out) {
        const autograd::SavedTensor saved(a, false);
        autograd::record("SinBackward", {a}, {out},
                         [saved](std::vector<Tensor>& grads) -> std::vector<Tensor> {
                           return {grads[0] * cos(saved.unpack("SinBackward"))};
                         });
      },
      a);
}

Tensor cos(const Tensor& a) {
  auto forward = [&] {
    return detail::spmd_pure(
        "cos", [](const Tensor& x) { return trig_kernel("cos", x); }, a);
  };
  return autograd::differentiable(
      forward,
      [&](const Tensor& out) {
        const autograd::SavedTensor saved(a, false);
        autograd::record("CosBackward", {a}, {out},
                         [saved](std::vector<Tensor>& grads) -> std::vector<Tensor> {
                           return {-grads[0] * sin(saved.unpack("CosBackward"))};
                         });
      },
      a);
}

}  // namespace tessera
