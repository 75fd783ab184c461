// layer_norm, rms_norm and their backward kernels on the GPU: the SDK's rules and row computations
// (sdk/cpp/norms.hpp, shared with the CPU backend). One thread per row, summing it in the SDK's
// fixed lane order, and one thread per column for the weight's and bias's gradients, adding the
// rows in row order: the same operations in the same order as the CPU backend, and the file is
// compiled without fused multiply-adds, so the results are the CPU backend's bits.
#include <cstdint>

#include "checks.hpp"
#include "kernels.hpp"
#include "launch.cuh"
#include "tessera/sdk/cpp/norms.hpp"

namespace tessera::cuda {
namespace {

// A 2-d tensor ([rows, length], any strides) or a 1-d one (row_stride unused), as a kernel
// argument; strides in elements.
struct Matrix {
  char* data;
  int64_t row_stride;
  int64_t stride;
};

Matrix matrix_of(const DLTensor& t) {
  Matrix m{static_cast<char*>(t.data) + t.byte_offset, 0, 1};
  if (t.ndim == 2) {
    m.row_stride = t.strides[0];
    m.stride = t.strides[1];
  } else if (t.ndim == 1) {
    m.stride = t.strides[0];
  }
  return m;
}
Matrix absent() { return Matrix{nullptr, 0, 1}; }

// One row (or a 1-d tensor) indexed by element position, as the SDK's row functions take.
template <class T>
struct Elements {
  T* first;
  int64_t stride;
  __host__ __device__ T& operator[](int64_t j) const { return first[j * stride]; }
};
template <class T>
__device__ Elements<T> row(const Matrix& m, int64_t r) {
  return {reinterpret_cast<T*>(m.data) + r * m.row_stride, m.stride};
}
template <class T>
__device__ Elements<T> all_of(const Matrix& m) {
  return {reinterpret_cast<T*>(m.data), m.stride};
}

template <class T, bool kLayer, bool kWeight, bool kBias, class C = sdk::NormCompute<T>>
__global__ void forward_device(int64_t rows, Matrix x, Matrix y, Matrix w, Matrix b, C* mean, C* rstd,
                               int64_t n, C eps) {
  for (int64_t r = grid_first(); r < rows; r += grid_step()) {
    if constexpr (kLayer)
      sdk::layer_norm_row<T, kWeight, kBias>(row<const T>(x, r), row<T>(y, r), all_of<const C>(w),
                                             all_of<const C>(b), n, eps, mean[r], rstd[r]);
    else
      sdk::rms_norm_row<T, kWeight>(row<const T>(x, r), row<T>(y, r), all_of<const C>(w), n, eps, rstd[r]);
  }
}

// The per-row statistics as inputs: 1-d, any stride.
template <class C>
__device__ C statistic(const Matrix& m, int64_t r) {
  return reinterpret_cast<const C*>(m.data)[r * m.stride];
}

template <class T, bool kLayer, bool kWeight, class C = sdk::NormCompute<T>>
__global__ void backward_rows_device(int64_t rows, Matrix g, Matrix x, Matrix mean, Matrix rstd, Matrix w,
                                     Matrix gx, int64_t n) {
  for (int64_t r = grid_first(); r < rows; r += grid_step())
    sdk::norm_backward_row<T, kLayer, kWeight>(row<const T>(g, r), row<const T>(x, r), row<T>(gx, r),
                                               all_of<const C>(w), n, kLayer ? statistic<C>(mean, r) : C(0),
                                               statistic<C>(rstd, r));
}

// grad_weight[j] = sum over rows of g * xhat, grad_bias[j] = sum over rows of g, from +0 in row
// order (the CPU backend's order).
template <class T, bool kLayer, bool kWeight, bool kBias, class C = sdk::NormCompute<T>>
__global__ void backward_columns_device(int64_t n, Matrix g, Matrix x, Matrix mean, Matrix rstd, C* gw, C* gb,
                                        int64_t rows) {
  for (int64_t j = grid_first(); j < n; j += grid_step()) {
    C weight_sum = 0, bias_sum = 0;
    for (int64_t r = 0; r < rows; ++r) {
      const C gv = sdk::norm_load<T>(row<const T>(g, r)[j]);
      const C m = kLayer ? statistic<C>(mean, r) : C(0);
      if constexpr (kWeight)
        weight_sum += gv * ((sdk::norm_load<T>(row<const T>(x, r)[j]) - m) * statistic<C>(rstd, r));
      if constexpr (kBias) bias_sum += gv;
    }
    if constexpr (kWeight) gw[j] = weight_sum;
    if constexpr (kBias) gb[j] = bias_sum;
  }
}

// Calls f.template operator()<kWeight, kBias>() for the call's flags.
template <class F>
void with_flags(bool weight, bool bias, const F& f) {
  if (weight && bias) return f.template operator()<true, true>();
  if (weight) return f.template operator()<true, false>();
  if (bias) return f.template operator()<false, true>();
  f.template operator()<false, false>();
}

template <class T, bool kLayer>
void forward_kernel(sdk::KernelArgs& args) {
  using C = sdk::NormCompute<T>;
  const char* op = kLayer ? "layer_norm" : "rms_norm";
  const sdk::NormCall call =
      sdk::checked_norm(args, op, sdk::dtype_of<T>(), sdk::dtype_of<C>(), expect_arity);
  const Matrix x = matrix_of(args.input(0)), y = matrix_of(args.output(0));
  const Matrix w = call.has_weight ? matrix_of(args.input(1)) : absent();
  const Matrix b = call.has_bias ? matrix_of(args.input(call.has_weight ? 2 : 1)) : absent();
  C* mean = kLayer ? sdk::data_of<C>(args.output(1)) : nullptr;
  C* rstd = sdk::data_of<C>(args.output(kLayer ? 2 : 1));
  const auto eps = static_cast<C>(sdk::float_attr(args, op, "eps"));
  with_flags(call.has_weight, call.has_bias, [&]<bool kWeight, bool kBias>() {
    launch_elements(op, &forward_device<T, kLayer, kWeight, kBias>, call.rows, x, y, w, b, mean, rstd,
                    call.length, eps);
  });
}

template <class T, bool kLayer>
void backward_kernel(sdk::KernelArgs& args) {
  using C = sdk::NormCompute<T>;
  const char* op = kLayer ? "layer_norm_backward" : "rms_norm_backward";
  const sdk::NormCall call =
      sdk::checked_norm(args, op, sdk::dtype_of<T>(), sdk::dtype_of<C>(), expect_arity);
  const Matrix g = matrix_of(args.input(0)), x = matrix_of(args.input(1));
  const Matrix mean = kLayer ? matrix_of(args.input(2)) : absent();
  const Matrix rstd = matrix_of(args.input(kLayer ? 3 : 2));
  const Matrix w = call.has_weight ? matrix_of(args.input(kLayer ? 4 : 3)) : absent();
  const Matrix gx = matrix_of(args.output(0));
  C* gw = call.has_weight ? sdk::data_of<C>(args.output(1)) : nullptr;
  C* gb = call.has_bias ? sdk::data_of<C>(args.output(call.has_weight ? 2 : 1)) : nullptr;
  with_flags(call.has_weight, call.has_bias, [&]<bool kWeight, bool kBias>() {
    launch_elements(op, &backward_rows_device<T, kLayer, kWeight>, call.rows, g, x, mean, rstd, w, gx,
                    call.length);
    if constexpr (kWeight || kBias)
      launch_elements(op, &backward_columns_device<T, kLayer, kWeight, kBias>, call.length, g, x, mean, rstd,
                      gw, gb, call.rows);
  });
}

// The catalogue's four ops through one kernel template (sdk::add_norm_kernels).
template <class Op, class T>
struct NormKernel {
  static void run(sdk::KernelArgs& args) {
    if constexpr (Op::backward)
      backward_kernel<T, Op::layer>(args);
    else
      forward_kernel<T, Op::layer>(args);
  }
};

}  // namespace

void register_norm_kernels(sdk::BackendBuilder& b) { sdk::add_norm_kernels<NormKernel>(b); }

}  // namespace tessera::cuda
