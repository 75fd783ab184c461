// The normalisation kernels of KERNELS.md ("Normalisation", SDK 1.7): layer_norm, rms_norm and
// their backward kernels, for every backend that has them: the argument rules, checked on the host,
// and the row computations, which compile as host code and, under nvcc, as device code too.
//
// Every sum over a row is one fixed order, lane_sum below: sixteen partial sums, lane l holding
// the terms l, l + 16, l + 32, ... added in that order, then the lanes combined pairwise in a fixed
// tree. The order depends on the row's length alone, never on a vector width, a thread count or a
// device, so a CPU's AVX-512, AVX2 and baseline code and a GPU thread all give the same bits
// (sqrt and division are IEEE's correctly rounded operations everywhere).
//
// The statistics and the scale are in the compute type (float64 for float64 rows, float32 for
// float32, bfloat16 and float16 rows); a bfloat16/float16 result is rounded once, at the output.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "tessera/sdk/cpp/backend_builder.hpp"
#include "tessera/sdk/cpp/half_precision.hpp"
#include "tessera/sdk/cpp/host_device.hpp"
#include "tessera/sdk/cpp/kernel_checks.hpp"

namespace tessera::sdk {

// ---- The compute type of a row type, and the conversions to and from it.

template <class T>
using NormCompute = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <class T>
TESSERA_SDK_HOST_DEVICE inline NormCompute<T> norm_load(T x) {
  if constexpr (is_half_precision<T>)
    return to_float(x);
  else
    return x;
}

template <class T>
TESSERA_SDK_HOST_DEVICE inline T norm_store(NormCompute<T> x) {
  if constexpr (is_half_precision<T>)
    return from_float<T>(x);
  else
    return x;
}

// ---- The fixed-order sum.

inline constexpr int64_t kNormLanes = 16;

// term(0) + ... + term(n - 1) in the order the header describes (an empty row sums to +0).
template <class C, class Term>
TESSERA_SDK_HOST_DEVICE inline C lane_sum(int64_t n, const Term& term) {
  C lanes[kNormLanes] = {};
  const int64_t whole = n - n % kNormLanes;
  for (int64_t i = 0; i < whole; i += kNormLanes)
    for (int64_t l = 0; l < kNormLanes; ++l) lanes[l] += term(i + l);
  for (int64_t i = whole; i < n; ++i) lanes[i - whole] += term(i);
  for (int64_t width = kNormLanes / 2; width > 0; width /= 2)
    for (int64_t l = 0; l < width; ++l) lanes[l] += lanes[l + width];
  return lanes[0];
}

// ---- Arguments.

// The four kernels' shared shape: `rows` rows of `length` elements (x is [rows, length]).
struct NormCall {
  int64_t rows;
  int64_t length;
  bool has_weight;
  bool has_bias;  // layer_norm and layer_norm_backward only
};

namespace norm_checks {

inline bool flag_attr(const KernelArgs& args, const char* op, const char* name) {
  const int64_t value = int_attr(args, op, name);
  if (value != 0 && value != 1)
    fail_invalid(std::string(op) + ": attribute '" + name + "' is " + std::to_string(value) +
                 ", expected 0 or 1");
  return value == 1;
}

// A [rows, length] tensor of `dtype` (x, out, grad, grad_x).
inline void expect_rows(const char* op, const char* role, const DLTensor& t, DLDataType dtype,
                        const DLTensor& x) {
  expect_dtype(op, role, t, dtype);
  expect_shape(op, role, t, x, "input x");
}

// A 1-d tensor of `n` elements of the compute type (weight, bias, mean, rstd, their gradients).
inline void expect_vector(const char* op, const char* role, const DLTensor& t, DLDataType compute, int64_t n,
                          const char* what) {
  expect_dtype(op, role, t, compute);
  expect_ndim(op, role, t, 1);
  expect_dim(op, role, t, 0, n, what);
}

}  // namespace norm_checks

// Checks a call of `op` (layer_norm, rms_norm, layer_norm_backward, rms_norm_backward) keyed by
// `dtype` whose compute type is `compute`. Inputs and outputs, in order (KERNELS.md):
//   layer_norm           x, [weight], [bias]             -> out, mean, rstd
//   rms_norm             x, [weight]                     -> out, rstd
//   layer_norm_backward  grad, x, mean, rstd, [weight]   -> grad_x, [grad_weight], [grad_bias]
//   rms_norm_backward    grad, x, rstd, [weight]         -> grad_x, [grad_weight]
// with the INT attributes has_weight (and has_bias for the layer_norm pair) saying which of the
// bracketed ones are there; the forward kernels take the FLOAT attribute eps.
inline NormCall checked_norm(const KernelArgs& args, const char* op, DLDataType dtype, DLDataType compute,
                             const ArityCheck& expect_arity) {
  using namespace norm_checks;
  const std::string name(op);
  const bool backward = name == "layer_norm_backward" || name == "rms_norm_backward";
  const bool layer = name == "layer_norm" || name == "layer_norm_backward";
  const bool has_weight = flag_attr(args, op, "has_weight");
  const bool has_bias = layer && flag_attr(args, op, "has_bias");
  const size_t stats = layer ? 2 : 1;
  const size_t params = (has_weight ? 1 : 0) + (has_bias ? 1 : 0);
  if (backward)
    expect_arity(args, op, 2 + stats + (has_weight ? 1 : 0), 1 + params);
  else
    expect_arity(args, op, 1 + params, 1 + stats);
  const DLTensor& x = args.input(backward ? 1 : 0);
  if (x.ndim != 2)
    fail_invalid(name + ": input x has shape " + shape_text(x) + ", expected 2 dims [rows, length]");
  expect_dtype(op, "input x", x, dtype);
  const int64_t rows = x.shape[0], length = x.shape[1];
  if (backward) {
    expect_rows(op, "input grad", args.input(0), dtype, x);
    expect_rows(op, "output grad_x", args.output(0), dtype, x);
    size_t in = 2;
    if (layer) expect_vector(op, "input mean", args.input(in++), compute, rows, "one per row of x");
    expect_vector(op, "input rstd", args.input(in++), compute, rows, "one per row of x");
    if (has_weight) expect_vector(op, "input weight", args.input(in), compute, length, "the row length of x");
    size_t out = 1;
    if (has_weight) {
      expect_vector(op, "output grad_weight", args.output(out), compute, length, "the row length of x");
      expect_contiguous(op, "output grad_weight", args.output(out++));
    }
    if (has_bias) {
      expect_vector(op, "output grad_bias", args.output(out), compute, length, "the row length of x");
      expect_contiguous(op, "output grad_bias", args.output(out));
    }
  } else {
    expect_rows(op, "output out", args.output(0), dtype, x);
    size_t in = 1;
    if (has_weight)
      expect_vector(op, "input weight", args.input(in++), compute, length, "the row length of x");
    if (has_bias) expect_vector(op, "input bias", args.input(in), compute, length, "the row length of x");
    for (size_t out = 1; out < 1 + stats; ++out) {
      const char* role = layer && out == 1 ? "output mean" : "output rstd";
      expect_vector(op, role, args.output(out), compute, rows, "one per row of x");
      expect_contiguous(op, role, args.output(out));
    }
    const double eps = float_attr(args, op, "eps");
    if (!(eps >= 0))
      fail_invalid(name + ": attribute 'eps' is " + std::to_string(eps) + ", expected a number >= 0");
  }
  return NormCall{rows, length, has_weight, has_bias};
}

// ---- The rows. X, Y, W, B and G are anything indexable by the element's position in the row
// (a pointer, or a strided view); W and B are ignored unless kWeight, kBias say they are there.

// layer_norm of one row: mean = S(x) / n, var = S((x - mean)^2) / n, rstd = 1 / sqrt(var + eps),
// y = (x - mean) * rstd [* w] [+ b], S being lane_sum.
template <class T, bool kWeight, bool kBias, class X, class Y, class W, class B, class C = NormCompute<T>>
TESSERA_SDK_HOST_DEVICE inline void layer_norm_row(const X& x, const Y& y, const W& w, const B& b, int64_t n,
                                                   C eps, C& mean_out, C& rstd_out) {
  const C count = static_cast<C>(n);
  const C mean = lane_sum<C>(n, [&](int64_t j) { return norm_load<T>(x[j]); }) / count;
  const C variance = lane_sum<C>(n,
                                 [&](int64_t j) {
                                   const C d = norm_load<T>(x[j]) - mean;
                                   return d * d;
                                 }) /
                     count;
  const C rstd = C(1) / hd::sqrt(variance + eps);
  for (int64_t j = 0; j < n; ++j) {
    C v = (norm_load<T>(x[j]) - mean) * rstd;
    if constexpr (kWeight) v = v * w[j];
    if constexpr (kBias) v = v + b[j];
    y[j] = norm_store<T>(v);
  }
  mean_out = mean;
  rstd_out = rstd;
}

// rms_norm of one row: rstd = 1 / sqrt(S(x^2) / n + eps), y = x * rstd [* w].
template <class T, bool kWeight, class X, class Y, class W, class C = NormCompute<T>>
TESSERA_SDK_HOST_DEVICE inline void rms_norm_row(const X& x, const Y& y, const W& w, int64_t n, C eps,
                                                 C& rstd_out) {
  const C mean_square = lane_sum<C>(n,
                                    [&](int64_t j) {
                                      const C v = norm_load<T>(x[j]);
                                      return v * v;
                                    }) /
                        static_cast<C>(n);
  const C rstd = C(1) / hd::sqrt(mean_square + eps);
  for (int64_t j = 0; j < n; ++j) {
    C v = norm_load<T>(x[j]) * rstd;
    if constexpr (kWeight) v = v * w[j];
    y[j] = norm_store<T>(v);
  }
  rstd_out = rstd;
}

// The gradient of one row of layer_norm (kLayer) or rms_norm, given the forward's statistics
// (mean is 0 for rms_norm). With xhat = (x - mean) * rstd and gw = g [* w]:
//   layer_norm: grad_x = (gw - S(gw) / n - xhat * S(gw * xhat) / n) * rstd
//   rms_norm:   grad_x = (gw - xhat * S(gw * xhat) / n) * rstd
// The weight's and bias's gradients are sums over rows, which the caller accumulates from
// g * xhat and g (row after row, in row order: a fixed order too).
template <class T, bool kLayer, bool kWeight, class G, class X, class GX, class W, class C = NormCompute<T>>
TESSERA_SDK_HOST_DEVICE inline void norm_backward_row(const G& g, const X& x, const GX& grad_x, const W& w,
                                                      int64_t n, C mean, C rstd) {
  const C count = static_cast<C>(n);
  auto gw = [&](int64_t j) {
    const C v = norm_load<T>(g[j]);
    if constexpr (kWeight)
      return v * w[j];
    else
      return v;
  };
  auto xhat = [&](int64_t j) { return (norm_load<T>(x[j]) - mean) * rstd; };
  const C dot = lane_sum<C>(n, [&](int64_t j) { return gw(j) * xhat(j); }) / count;
  C gw_mean = 0;
  if constexpr (kLayer) gw_mean = lane_sum<C>(n, gw) / count;
  for (int64_t j = 0; j < n; ++j) {
    C v = gw(j);
    if constexpr (kLayer) v = v - gw_mean;
    grad_x[j] = norm_store<T>((v - xhat(j) * dot) * rstd);
  }
}

// ---- The catalogue: the four ops on their key dtypes. A backend writes its kernel once, as
// Kernel<Op, T>::run(KernelArgs&) with Op one of the tags below (Op::name, Op::layer: layer_norm
// rather than rms_norm, Op::backward), and registers them all with
//   sdk::add_norm_kernels<MyNormKernel>(builder);

namespace norm_ops {
template <bool kLayer, bool kBackward>
struct NormOp {
  static constexpr bool layer = kLayer;
  static constexpr bool backward = kBackward;
  static constexpr const char* name = kLayer ? (kBackward ? "layer_norm_backward" : "layer_norm")
                                             : (kBackward ? "rms_norm_backward" : "rms_norm");
};
using LayerNorm = NormOp<true, false>;
using RmsNorm = NormOp<false, false>;
using LayerNormBackward = NormOp<true, true>;
using RmsNormBackward = NormOp<false, true>;
}  // namespace norm_ops

template <template <class Op, class T> class Kernel>
void add_norm_kernels(BackendBuilder& b) {
  using namespace norm_ops;
  add_op_kernels<Kernel, LayerNorm, float, double, bfloat16, float16>(b);
  add_op_kernels<Kernel, RmsNorm, float, double, bfloat16, float16>(b);
  add_op_kernels<Kernel, LayerNormBackward, float, double, bfloat16, float16>(b);
  add_op_kernels<Kernel, RmsNormBackward, float, double, bfloat16, float16>(b);
}

}  // namespace tessera::sdk
