// copy (same dtype) and cast (any dtype to any) between arbitrarily strided device tensors, with the
// CPU backend's conversion rules.
#include <cstdint>
#include <limits>
#include <type_traits>

#include "checks.hpp"
#include "kernels.hpp"
#include "launch.cuh"
#include "strided_index.cuh"

namespace tessera::cuda {
namespace {

// std::numeric_limits's functions are host-only; constants computed from them are usable anywhere.
template <class D>
constexpr D kLargest = std::numeric_limits<D>::max();
template <class D>
constexpr D kSmallest = std::numeric_limits<D>::min();

// One element from S to D. Converting an out-of-range or NaN float to an integer is undefined (and
// on the GPU gives whatever cvt saturates to, which differs from the CPU's rule for NaN), hence the
// explicit rules: NaN -> 0, saturate, otherwise truncate toward zero. Integer to narrower integer
// wraps (modular since C++20), as in PyTorch. A float to int8/uint8 goes through int64, then wraps.
// bfloat16 and float16 go through float32 with the SDK's conversions (sdk/cpp/half_precision.hpp),
// the CPU backend's bits.
template <class D, class S>
__device__ D convert(S x) {
  if constexpr (std::is_same_v<D, S>) {
    return x;
  } else if constexpr (sdk::is_half_precision<S>) {
    return convert<D>(sdk::to_float(x));
  } else if constexpr (sdk::is_half_precision<D>) {
    return sdk::from_float<D>(convert<float>(x));
  } else if constexpr (std::is_same_v<D, bool>) {
    return x != S(0);
  } else if constexpr (std::is_floating_point_v<S> && std::is_integral_v<D> && sizeof(D) == 1) {
    return static_cast<D>(convert<int64_t>(x));
  } else if constexpr (std::is_floating_point_v<S> && std::is_integral_v<D>) {
    if (isnan(x)) return D(0);
    // S(max) is max itself or, where S cannot hold it, rounds up to 2^digits; either way values at
    // or above it saturate and values below truncate into range. S(min) = -2^digits is exact.
    if (x >= static_cast<S>(kLargest<D>)) return kLargest<D>;
    if (x <= static_cast<S>(kSmallest<D>)) return kSmallest<D>;
    return static_cast<D>(x);
  } else {
    return static_cast<D>(x);
  }
}

template <class S, class D>
__global__ void convert_elements(int64_t n, StridedView a, StridedView out) {
  const S* x = reinterpret_cast<const S*>(a.data);
  D* y = reinterpret_cast<D*>(out.data);
  for (int64_t i = grid_first(); i < n; i += grid_step())
    y[offset_of(out, i)] = convert<D, S>(x[offset_of(a, i)]);
}

template <class S, class D>
void convert_views(const char* op, const DLTensor& a, const DLTensor& out) {
  const StridedView out_view = make_view(out, op, "output");
  launch_elements(op, &convert_elements<S, D>, numel_of(out_view), make_view(a, op, "input 0"), out_view);
}

// Keyed by the source dtype; the destination dtype is whatever the output is.
template <class S>
void cast_kernel(sdk::KernelArgs& args) {
  expect_arity(args, "cast", 1, 1);
  const DLTensor& a = args.input(0);
  const DLTensor& out = args.output(0);
  expect_dtype("cast", "input 0", a, sdk::dtype_of<S>());
  expect_shape("cast", "output", out, a, "input 0");

  if (!sdk::visit_any_dtype(out.dtype, [&]<class D>() { convert_views<S, D>("cast", a, out); }))
    fail("cast: output has dtype " + dtype_name(out.dtype) +
         ", expected one of float32, float64, int32, int64, bool, bfloat16, float16, int8, uint8");
}

template <class T>
void copy_kernel(sdk::KernelArgs& args) {
  sdk::expect_unary(args, "copy", sdk::dtype_of<T>(), expect_arity);
  const DLTensor& a = args.input(0);
  const DLTensor& out = args.output(0);
  if (sdk::is_contiguous(a) && sdk::is_contiguous(out)) {
    // The common case (contiguous tensors, collective messages): one copy engine transfer. The
    // contract says a and out never overlap, so memcpy (not memmove) semantics are enough.
    const size_t bytes = static_cast<size_t>(sdk::numel(out)) * sizeof(T);
    if (bytes == 0) return;
    check(cudaMemcpyAsync(sdk::data_of<T>(out), sdk::data_of<const T>(a), bytes, cudaMemcpyDeviceToDevice,
                          cudaStreamPerThread),
          "copy");
    synchronize("copy");
    return;
  }
  convert_views<T, T>("copy", a, out);
}

template <class... Ts>
void add_kernels(sdk::BackendBuilder& b) {
  (b.kernel<&copy_kernel<Ts>>("copy", sdk::dtype_of<Ts>()), ...);
  (b.kernel<&cast_kernel<Ts>>("cast", sdk::dtype_of<Ts>()), ...);
}

}  // namespace

void register_cast_copy_kernels(sdk::BackendBuilder& b) {
  add_kernels<float, double, int32_t, int64_t, bool, sdk::bfloat16, sdk::float16, int8_t, uint8_t>(b);
}

}  // namespace tessera::cuda
