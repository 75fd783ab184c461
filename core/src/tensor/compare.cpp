// Whole-tensor comparisons, computed with the backend's element-wise and reduction kernels.
#include "tensor/internal.hpp"
#include "tessera/ops.hpp"

namespace tessera {

bool equal(const Tensor& a, const Tensor& b) {
  detail::impl_of(a, "equal");
  detail::impl_of(b, "equal");
  if (a.sizes() != b.sizes()) return false;
  return all(eq(a, b)).item<bool>();
}

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol) {
  detail::impl_of(a, "allclose");
  detail::impl_of(b, "allclose");
  // |a - b| <= atol + rtol * |b|, with equal infinities counting as close and NaN never close.
  const Tensor close = le(abs(sub(a, b)), add(mul(abs(b), rtol), atol));
  return all(maximum(close, eq(a, b))).item<bool>();
}

}  // namespace tessera
