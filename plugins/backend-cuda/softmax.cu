// softmax and log_softmax over the last dim, with the CPU backend's formula: the row max is
// subtracted before exp so that large inputs do not overflow, the exps are summed in order, and a
// NaN anywhere in a row makes the whole row NaN.
//
// One thread per row, walking it sequentially: the sum then adds in the CPU backend's order (a
// parallel tree sum would round differently). exp and log are CUDA's, which are within an ulp or
// two of the host libm's, not bit-identical to it.
#include <cstdint>

#include "checks.hpp"
#include "kernels.hpp"
#include "launch.cuh"
#include "strided_index.cuh"

namespace tessera::cuda {
namespace {

// The leading dims of a view (all but the last): one row each.
StridedView rows_of(const StridedView& v) {
  StridedView rows = v;
  rows.ndim = v.ndim == 0 ? 0 : v.ndim - 1;
  rows.contiguous = false;  // offsets go through the strides: a row's start is not its index
  return rows;
}

template <class T, bool Log>
__global__ void softmax_device(int64_t num_rows, StridedView a_rows, int64_t a_stride, StridedView out_rows,
                               int64_t out_stride, int64_t n) {
  for (int64_t r = grid_first(); r < num_rows; r += grid_step()) {
    const T* x = reinterpret_cast<const T*>(a_rows.data) + offset_of(a_rows, r);
    T* y = reinterpret_cast<T*>(out_rows.data) + offset_of(out_rows, r);
    if (n == 0) continue;
    T max = x[0];
    for (int64_t j = 1; j < n; ++j)
      if (max < x[j * a_stride]) max = x[j * a_stride];

    T sum = 0;
    for (int64_t j = 0; j < n; ++j) {
      const T e = exp(x[j * a_stride] - max);
      sum += e;
      if constexpr (!Log) y[j * out_stride] = e;
    }

    if constexpr (Log) {
      const T log_sum = log(sum);
      for (int64_t j = 0; j < n; ++j) y[j * out_stride] = x[j * a_stride] - max - log_sum;
    } else {
      for (int64_t j = 0; j < n; ++j) y[j * out_stride] /= sum;
    }
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
  const StridedView a_rows = rows_of(make_view(a, op, "input 0"));
  const StridedView out_rows = rows_of(make_view(out, op, "output"));
  launch_elements(op, &softmax_device<T, Log>, numel_of(a_rows), a_rows, a_stride, out_rows, out_stride, n);
}

}  // namespace

void register_softmax_kernels(sdk::BackendBuilder& b) {
  b.kernel<&softmax_kernel<float, false>>("softmax", sdk::kFloat32);
  b.kernel<&softmax_kernel<double, false>>("softmax", sdk::kFloat64);
  b.kernel<&softmax_kernel<float, true>>("log_softmax", sdk::kFloat32);
  b.kernel<&softmax_kernel<double, true>>("log_softmax", sdk::kFloat64);
}

}  // namespace tessera::cuda
