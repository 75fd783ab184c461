// silu, tanh-approximated gelu, rsqrt and clamp, composed of existing ops as PyTorch's reference
// decompositions are (torch._refs), so autograd, local tensors and every backend (the shapes-only
// one too) come from their parts.
#include <fmt/format.h>

#include <cmath>

#include "dispatch/user_call.hpp"
#include "tensor/float32_compute.hpp"
#include "tessera/errors.hpp"
#include "tessera/ops.hpp"

namespace tessera {

Tensor silu(const Tensor& x) {
  const dispatch::UserCall call("ts::silu");
  const Tensor wide = detail::widened(x);
  return detail::narrowed(wide * sigmoid(wide), x.dtype());
}

Tensor gelu(const Tensor& x, std::string_view approximate) {
  if (approximate == "none") return gelu(x);
  if (approximate != "tanh")
    throw Error(fmt::format("gelu: approximate is '{}', expected 'none' or 'tanh'", approximate));
  const dispatch::UserCall call("ts::gelu");
  // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
  const double beta = std::sqrt(2.0) * (2.0 / std::sqrt(M_PI)) * 0.5;
  const Tensor wide = detail::widened(x);
  const Tensor cube = wide * wide * wide;
  return detail::narrowed(0.5 * wide * (1 + tanh(beta * (wide + 0.044715 * cube))), x.dtype());
}

Tensor rsqrt(const Tensor& x) {
  const dispatch::UserCall call("ts::rsqrt");
  return detail::narrowed(1 / sqrt(detail::widened(x)), x.dtype());
}

// Each bound keeps the elements on its side, and NaN (which compares false everywhere), as
// torch._refs.clamp does; the gradient flows where lo <= x <= hi, bounds included, as PyTorch's.
Tensor clamp(const Tensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi) {
  if (!lo && !hi) throw Error("clamp: both bounds are none, expected at least one of lo and hi");
  const dispatch::UserCall call("ts::clamp");
  Tensor out = x;
  // maximum of bools is their or.
  if (lo) out = where(maximum(ge(out, *lo), ne(out, out)), out, *lo);
  if (hi) out = where(maximum(le(out, *hi), ne(out, out)), out, *hi);
  return out;
}

}  // namespace tessera
