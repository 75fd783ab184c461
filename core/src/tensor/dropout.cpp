// dropout: element i is kept when the uniform number at counter (offset + i) of the generator is
// below 1 - p (a Bernoulli(1 - p) draw, as PyTorch's), and kept values are scaled by 1 / (1 - p).
// The numbers are rand()'s, so they depend only on the seed, the generator's offset and the
// element's row-major index (the DTensor form indexes the global tensor the same way).
#include <fmt/format.h>

#include "tensor/internal.hpp"
#include "tessera/errors.hpp"
#include "tessera/factories.hpp"
#include "tessera/ops.hpp"

namespace tessera {
namespace {

// x scaled by the keep mask of `uniform` (same shape), or x itself / zeros for the edge cases.
Tensor apply_mask(const Tensor& x, const Tensor& uniform, double p) {
  const Tensor keep = lt(uniform, Scalar(1.0 - p)).to(x.dtype());
  return x * (keep * (1.0 / (1.0 - p)));
}

void check_dropout(const Tensor& x, double p) {
  if (!x.defined()) detail::impl_of(x, "dropout");
  if (!(p >= 0.0 && p <= 1.0))
    throw Error(fmt::format("dropout: p is {}, expected a probability in [0, 1]", p));
  if (!is_floating(x.dtype()))
    throw Error(
        fmt::format("dropout: input has dtype {}, expected float32 or float64", dtype_name(x.dtype())));
}

}  // namespace

Tensor dropout(const Tensor& x, double p, bool training) {
  check_dropout(x, p);
  if (!training || p == 0.0) return x;
  if (p == 1.0) return x * 0.0;  // the gradient is zero too; no numbers are drawn (as PyTorch)
  return apply_mask(x, rand(x.shape(), TensorOptions(x.dtype()).backend(x.backend())), p);
}

Tensor dropout(const Tensor& x, double p, bool training, Generator& generator) {
  check_dropout(x, p);
  if (!training || p == 0.0) return x;
  if (p == 1.0) return x * 0.0;
  return apply_mask(x, rand(x.shape(), generator, TensorOptions(x.dtype()).backend(x.backend())), p);
}

}  // namespace tessera
