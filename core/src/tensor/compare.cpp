// Whole-tensor comparisons, computed with the backend's element-wise and reduction kernels. On
// local tensors the answer is true only when it is true on every rank.
#include "dispatch/user_call.hpp"
#include "tensor/internal.hpp"
#include "tessera/detail/spmd.hpp"
#include "tessera/ops.hpp"

namespace tessera {
namespace {

bool dense_equal(const Tensor& a, const Tensor& b) {
  detail::impl_of(a, "equal");
  detail::impl_of(b, "equal");
  if (a.sizes() != b.sizes()) return false;
  return all(eq(a, b)).item<bool>();
}

bool dense_allclose(const Tensor& a, const Tensor& b, double rtol, double atol) {
  detail::impl_of(a, "allclose");
  detail::impl_of(b, "allclose");
  // |a - b| <= atol + rtol * |b|, with equal infinities counting as close and NaN never close.
  const Tensor close = le(abs(sub(a, b)), add(mul(abs(b), rtol), atol));
  return all(maximum(close, eq(a, b))).item<bool>();
}

// Per rank as 0/1, so ranks may disagree; the answer is true only when every rank says 1.
template <class F>
bool on_every_rank(const char* op, F&& check, const Tensor& a, const Tensor& b) {
  const SymInt answers = detail::spmd(
      op, [&](const Tensor& x, const Tensor& y) { return int64_t{check(x, y)}; }, a, b);
  return !answers.is_local() && answers.as_int() == 1;
}

}  // namespace

bool equal(const Tensor& a, const Tensor& b) {
  const dispatch::UserCall call("ts::equal");
  return on_every_rank("equal", dense_equal, a, b);
}

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol) {
  const dispatch::UserCall call("ts::allclose");
  return on_every_rank(
      "allclose", [&](const Tensor& x, const Tensor& y) { return dense_allclose(x, y, rtol, atol); }, a, b);
}

}  // namespace tessera
