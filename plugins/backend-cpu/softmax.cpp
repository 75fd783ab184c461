// softmax and log_softmax over the last dim. The row max is subtracted before exp so that large
// inputs do not overflow; a NaN anywhere in a row makes the whole row NaN.
#include <array>
#include <cmath>
#include <cstdint>

#include "checks.hpp"
#include "kernels.hpp"
#include "tessera/sdk/cpp/strided_loop.hpp"
#include "views.hpp"

namespace tessera::cpu {
namespace {

template <class T, bool Log>
void softmax_row(const T* x, int64_t x_stride, T* y, int64_t y_stride, int64_t n) {
  if (n == 0) return;
  T max = x[0];
  for (int64_t j = 1; j < n; ++j)
    if (max < x[j * x_stride]) max = x[j * x_stride];

  T sum = 0;
  for (int64_t j = 0; j < n; ++j) {
    const T e = std::exp(x[j * x_stride] - max);
    sum += e;
    if constexpr (!Log) y[j * y_stride] = e;
  }

  if constexpr (Log) {
    const T log_sum = std::log(sum);
    for (int64_t j = 0; j < n; ++j) y[j * y_stride] = x[j * x_stride] - max - log_sum;
  } else {
    for (int64_t j = 0; j < n; ++j) y[j * y_stride] /= sum;
  }
}

// A 0-d tensor is one row of one element.
template <class T, bool Log>
void softmax_kernel(sdk::KernelArgs& args) {
  const char* op = Log ? "log_softmax" : "softmax";
  expect_arity(args, op, 1, 1);
  const DLTensor& a = args.input(0);
  const DLTensor& out = args.output(0);
  expect_dtype(op, "input 0", a, sdk::dtype_of<T>());
  expect_dtype(op, "output", out, sdk::dtype_of<T>());
  expect_shape(op, "output", out, a, "input 0");

  const int last = a.ndim - 1;
  const int64_t n = a.ndim == 0 ? 1 : a.shape[last];
  const int64_t a_stride = a.ndim == 0 ? 0 : a.strides[last];
  const int64_t out_stride = out.ndim == 0 ? 0 : out.strides[last];
  const DLTensor a_rows = leading_dims(a, a.ndim == 0 ? 0 : last);
  const DLTensor out_rows = leading_dims(out, out.ndim == 0 ? 0 : last);
  const T* x = sdk::data_of<const T>(a);
  T* y = sdk::data_of<T>(out);
  sdk::for_each_offset<2>(a_rows.ndim, a_rows.shape, {&a_rows, &out_rows},
                          [&](const std::array<int64_t, 2>& o) {
                            softmax_row<T, Log>(x + o[0], a_stride, y + o[1], out_stride, n);
                          });
}

}  // namespace

void register_softmax_kernels(sdk::BackendBuilder& b) {
  b.kernel<&softmax_kernel<float, false>>("softmax", sdk::kFloat32);
  b.kernel<&softmax_kernel<double, false>>("softmax", sdk::kFloat64);
  b.kernel<&softmax_kernel<float, true>>("log_softmax", sdk::kFloat32);
  b.kernel<&softmax_kernel<double, true>>("log_softmax", sdk::kFloat64);
}

}  // namespace tessera::cpu
