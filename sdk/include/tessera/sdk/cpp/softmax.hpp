// softmax and log_softmax over the last dim (KERNELS.md), for every backend that has them: the
// argument rules, checked on the host, and the row computation, which compiles as host code and,
// under nvcc, as device code too. The row max is subtracted before exp so that large inputs do not
// overflow, the exps are summed in order, and a NaN anywhere in a row makes the whole row NaN. exp
// and log are the host libm's on the host and CUDA's on a device (within an ulp or two of each
// other, not bit-identical).
#pragma once

#include <cstdint>

#include "tessera/sdk/cpp/host_device.hpp"
#include "tessera/sdk/cpp/kernel_checks.hpp"

namespace tessera::sdk {

// The rows of a call: the input's leading dims (all but the last) index them; each has `length`
// elements, `input_stride` and `output_stride` apart. A 0-d tensor is one row of one element.
struct SoftmaxRows {
  int row_ndim;
  int64_t length;
  int64_t input_stride;
  int64_t output_stride;
};

// One input and one output of `dtype`, of the same shape.
inline SoftmaxRows checked_softmax(const KernelArgs& args, const char* op, DLDataType dtype,
                                   const ArityCheck& expect_arity) {
  expect_unary(args, op, dtype, expect_arity);
  const DLTensor& a = args.input(0);
  const DLTensor& out = args.output(0);
  if (a.ndim == 0) return SoftmaxRows{0, 1, 0, 0};
  const int last = a.ndim - 1;
  return SoftmaxRows{last, a.shape[last], a.strides[last], out.strides[last]};
}

// One row: y = softmax(x) (or log_softmax when `Log`), both strided.
template <class T, bool Log>
TESSERA_SDK_HOST_DEVICE void softmax_row(const T* x, int64_t x_stride, T* y, int64_t y_stride, int64_t n) {
  if (n == 0) return;
  T max = x[0];
  for (int64_t j = 1; j < n; ++j)
    if (max < x[j * x_stride]) max = x[j * x_stride];

  T sum = 0;
  for (int64_t j = 0; j < n; ++j) {
    const T e = hd::exp(x[j * x_stride] - max);
    sum += e;
    if constexpr (!Log) y[j * y_stride] = e;
  }

  if constexpr (Log) {
    const T log_sum = hd::log(sum);
    for (int64_t j = 0; j < n; ++j) y[j * y_stride] = x[j * x_stride] - max - log_sum;
  } else {
    for (int64_t j = 0; j < n; ++j) y[j * y_stride] /= sum;
  }
}

}  // namespace tessera::sdk
