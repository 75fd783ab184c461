#include "tensor/norm_kernels.hpp"

#include <atomic>

#include "autograd/derivatives.hpp"
#include "autograd/record.hpp"
#include "dispatch/backend.hpp"
#include "tensor/internal.hpp"
#include "tessera/detail/spmd.hpp"

namespace tessera::detail {
namespace {

const char* forward_kernel_of(NormKind kind) { return kind == NormKind::kLayer ? "layer_norm" : "rms_norm"; }
const char* backward_kernel_of(NormKind kind) {
  return kind == NormKind::kLayer ? "layer_norm_backward" : "rms_norm_backward";
}

// The statistics and the weight are float64 for float64 rows and float32 for every other dtype.
DType norm_compute_dtype(DType x) { return x == kFloat64 ? kFloat64 : kFloat32; }

bool backend_serves(const TensorImpl& t, const char* op) {
  const dispatch::Backend& backend = t.backend();
  return backend.find_kernel(op, t.dtype()) != nullptr ||
         (is_reduced_float(t.dtype()) && backend.find_kernel(op, kFloat32) != nullptr);
}

// x seen as [rows, length], length being the product of its last `normalized_ndim` dims.
struct NormRows {
  int64_t rows = 1;
  int64_t length = 1;
  Shape normalized_shape;
};
NormRows norm_rows_of(const Shape& sizes, size_t normalized_ndim) {
  NormRows r;
  const size_t first = sizes.size() - normalized_ndim;
  for (size_t d = 0; d < sizes.size(); ++d) (d < first ? r.rows : r.length) *= sizes[d];
  r.normalized_shape.assign(sizes.begin() + static_cast<ptrdiff_t>(first), sizes.end());
  return r;
}

// A weight or bias as the kernels take it: 1-d, in the compute dtype (undefined stays undefined).
Tensor norm_param(const Tensor& p, DType compute, int64_t length) {
  return p.defined() ? p.to(compute).reshape({length}) : Tensor();
}

// One shard's forward: {out, mean, rstd} (layer_norm) or {out, rstd} (rms_norm).
std::vector<Tensor> dense_norm_forward(NormKind kind, const Tensor& x, size_t normalized_ndim,
                                       const Tensor& weight, const Tensor& bias, double eps) {
  const char* op = forward_kernel_of(kind);
  const TensorImpl& self = impl_of(x, op);
  const NormRows r = norm_rows_of(self.sizes(), normalized_ndim);
  const DType compute = norm_compute_dtype(self.dtype());
  const Tensor rows = x.reshape({r.rows, r.length});
  const Tensor w = norm_param(weight, compute, r.length);
  const Tensor b = norm_param(bias, compute, r.length);
  Tensor out = empty_like_on(self, {r.rows, r.length}, self.dtype());
  const Tensor mean = kind == NormKind::kLayer ? empty_like_on(self, {r.rows}, compute) : Tensor();
  Tensor rstd = empty_like_on(self, {r.rows}, compute);

  std::vector<dispatch::Operand> inputs = {dispatch::operand(*rows.impl())};
  for (const Tensor* p : {&w, &b})
    if (p->defined()) inputs.push_back(dispatch::operand(*p->impl()));
  std::vector<dispatch::Operand> outputs = {dispatch::operand(*out.impl())};
  if (mean.defined()) outputs.push_back(dispatch::operand(*mean.impl()));
  outputs.push_back(dispatch::operand(*rstd.impl()));
  const dispatch::Attr attrs[] = {dispatch::Attr::real("eps", eps),
                                  dispatch::Attr::integer("has_weight", w.defined() ? 1 : 0),
                                  dispatch::Attr::integer("has_bias", b.defined() ? 1 : 0)};
  dispatch::call_kernel(op, self.dtype(), inputs, outputs, attrs);

  out = out.reshape(self.sizes());
  if (mean.defined()) return {out, mean, rstd};
  return {out, rstd};
}

// One shard's backward: {grad_x, [grad_weight], [grad_bias]}.
std::vector<Tensor> dense_norm_backward(NormKind kind, const Tensor& grad, const Tensor& x,
                                        const Tensor& mean, const Tensor& rstd, const Tensor& weight,
                                        bool has_bias, size_t normalized_ndim) {
  const char* op = backward_kernel_of(kind);
  const TensorImpl& self = impl_of(x, op);
  const NormRows r = norm_rows_of(self.sizes(), normalized_ndim);
  const DType compute = norm_compute_dtype(self.dtype());
  const Tensor g = grad.to(self.dtype()).reshape({r.rows, r.length});
  const Tensor rows = x.reshape({r.rows, r.length});
  const Tensor w = norm_param(weight, compute, r.length);
  const Tensor grad_x = empty_like_on(self, {r.rows, r.length}, self.dtype());
  const Tensor grad_w = w.defined() ? empty_like_on(self, {r.length}, compute) : Tensor();
  const Tensor grad_b = has_bias ? empty_like_on(self, {r.length}, compute) : Tensor();

  std::vector<dispatch::Operand> inputs = {dispatch::operand(*g.impl()), dispatch::operand(*rows.impl())};
  if (mean.defined()) inputs.push_back(dispatch::operand(impl_of(mean, op)));
  inputs.push_back(dispatch::operand(impl_of(rstd, op)));
  if (w.defined()) inputs.push_back(dispatch::operand(*w.impl()));
  std::vector<dispatch::Operand> outputs = {dispatch::operand(*grad_x.impl())};
  for (const Tensor* p : {&grad_w, &grad_b})
    if (p->defined()) outputs.push_back(dispatch::operand(*p->impl()));
  const dispatch::Attr attrs[] = {dispatch::Attr::integer("has_weight", w.defined() ? 1 : 0),
                                  dispatch::Attr::integer("has_bias", has_bias ? 1 : 0)};
  dispatch::call_kernel(op, self.dtype(), inputs, outputs, attrs);

  std::vector<Tensor> grads = {grad_x.reshape(self.sizes())};
  for (const Tensor* p : {&grad_w, &grad_b})
    if (p->defined()) grads.push_back(p->reshape(r.normalized_shape));
  return grads;
}

}  // namespace

bool has_norm_kernels(NormKind kind, const Tensor& x) {
  const char* op = forward_kernel_of(kind);
  std::atomic<bool> served{true};
  spmd(
      op,
      [&](const Tensor& shard) {
        const TensorImpl& t = impl_of(shard, op);
        if (!backend_serves(t, op) || !backend_serves(t, backward_kernel_of(kind))) served = false;
      },
      x);
  return served;
}

Tensor fused_norm(NormKind kind, const Tensor& x, size_t normalized_ndim, const Tensor& weight,
                  const Tensor& bias, double eps) {
  const bool has_weight = weight.defined(), has_bias = bias.defined();
  std::vector<Tensor> inputs = {x};
  if (has_weight) inputs.push_back(weight);
  if (has_bias) inputs.push_back(bias);
  auto forward = [&] {
    return spmd_pure(
        forward_kernel_of(kind),
        [&](const std::vector<Tensor>& in) {
          const Tensor w = has_weight ? in[1] : Tensor();
          const Tensor b = has_bias ? in[has_weight ? 2 : 1] : Tensor();
          return dense_norm_forward(kind, in[0], normalized_ndim, w, b, eps);
        },
        inputs);
  };
  if (!autograd::any_requires_grad(inputs)) return forward()[0];
  const std::vector<Tensor> results = autograd::untracked(forward);
  const Tensor mean = kind == NormKind::kLayer ? results[1] : Tensor();
  autograd::record_norm(kind == NormKind::kLayer, inputs, has_weight, has_bias, normalized_ndim, results[0],
                        mean, results.back());
  return results[0];
}

std::vector<Tensor> norm_backward(NormKind kind, const Tensor& grad, const Tensor& x, const Tensor& mean,
                                  const Tensor& rstd, const Tensor& weight, bool has_bias,
                                  size_t normalized_ndim) {
  std::vector<Tensor> args = {grad, x, rstd};
  if (mean.defined()) args.push_back(mean);
  if (weight.defined()) args.push_back(weight);
  return spmd_pure(
      backward_kernel_of(kind),
      [&](const std::vector<Tensor>& in) {
        const Tensor m = mean.defined() ? in[3] : Tensor();
        const Tensor w = weight.defined() ? in.back() : Tensor();
        return dense_norm_backward(kind, in[0], in[1], m, in[2], w, has_bias, normalized_ndim);
      },
      args);
}

}  // namespace tessera::detail
