// copy (same dtype) and cast (any dtype to any), both between arbitrarily strided tensors.
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "checks.hpp"
#include "half_conversions.hpp"
#include "kernels.hpp"
#include "tessera/sdk/cpp/strided_loop.hpp"

namespace tessera::cpu {
namespace {

// One element from S to D. A plain static_cast of an out-of-range or NaN float to an integer is
// undefined behaviour, hence the explicit rules: NaN -> 0, saturate, otherwise truncate toward zero.
// Integer to narrower integer wraps (modular since C++20), as in PyTorch. A float to int8 or uint8
// (out-of-range values are undefined in PyTorch) is that float to int64, then wrapped modulo 2^8:
// -1.5 -> uint8 255, 300.7 -> uint8 44, NaN -> 0.
// bfloat16 and float16 go through float32: exact from them; to them, one rounding from float32,
// and float64 and int64 sources are first converted to float32 (two roundings), as PyTorch does.
template <class D, class S>
D convert(S x) {
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
    using limits = std::numeric_limits<D>;
    if (std::isnan(x)) return D(0);
    // S(max) is max itself or, where S cannot hold it, rounds up to 2^digits; either way values at
    // or above it saturate and values below truncate into range. S(min) = -2^digits is exact.
    if (x >= static_cast<S>(limits::max())) return limits::max();
    if (x <= static_cast<S>(limits::min())) return limits::min();
    return static_cast<D>(x);
  } else {
    return static_cast<D>(x);
  }
}

// The storage of a bfloat16 / float16 buffer, its bit patterns (each struct holds one uint16_t).
template <class H>
uint16_t* bits_of(H* p) {
  return reinterpret_cast<uint16_t*>(p);
}
template <class H>
const uint16_t* bits_of(const H* p) {
  return reinterpret_cast<const uint16_t*>(p);
}

template <class S, class D>
void cast_loop(const DLTensor& a, const DLTensor& out) {
  const S* x = sdk::data_of<const S>(a);
  D* y = sdk::data_of<D>(out);
  // float32 <-> bfloat16 / float16 between contiguous buffers: the vector conversions.
  if constexpr (std::is_same_v<S, float> && sdk::is_half_precision<D>) {
    if (sdk::is_contiguous(a) && sdk::is_contiguous(out)) {
      if constexpr (std::is_same_v<D, sdk::bfloat16>)
        return narrow_to_bfloat16(x, bits_of(y), sdk::numel(out));
      return narrow_to_float16(x, bits_of(y), sdk::numel(out));
    }
  }
  if constexpr (sdk::is_half_precision<S> && std::is_same_v<D, float>) {
    if (sdk::is_contiguous(a) && sdk::is_contiguous(out)) {
      if constexpr (std::is_same_v<S, sdk::bfloat16>)
        return widen_from_bfloat16(bits_of(x), y, sdk::numel(out));
      return widen_from_float16(bits_of(x), y, sdk::numel(out));
    }
  }
  sdk::for_each_offset<2>(out.ndim, out.shape, {&a, &out},
                          [&](const std::array<int64_t, 2>& o) { y[o[1]] = convert<D>(x[o[0]]); });
}

// Keyed by the source dtype; the destination dtype is whatever the output is.
template <class S>
void cast_kernel(sdk::KernelArgs& args) {
  expect_arity(args, "cast", 1, 1);
  const DLTensor& a = args.input(0);
  const DLTensor& out = args.output(0);
  expect_dtype("cast", "input 0", a, sdk::dtype_of<S>());
  expect_shape("cast", "output", out, a, "input 0");

  if (!sdk::visit_any_dtype(out.dtype, [&]<class D>() { cast_loop<S, D>(a, out); }))
    fail("cast: output has dtype " + dtype_name(out.dtype) +
         ", expected one of float32, float64, int32, int64, bool, bfloat16, float16, int8, uint8");
}

// Rows at least this long are copied with memcpy (shorter ones element by element).
constexpr int64_t kRowCopyMin = 16;

template <class T>
void copy_kernel(sdk::KernelArgs& args) {
  sdk::expect_unary(args, "copy", sdk::dtype_of<T>(), expect_arity);
  const DLTensor& a = args.input(0);
  const DLTensor& out = args.output(0);
  if (sdk::is_contiguous(a) && sdk::is_contiguous(out)) {
    // The common case (contiguous tensors, collective messages): one memcpy.
    std::memcpy(sdk::data_of<T>(out), sdk::data_of<const T>(a),
                static_cast<size_t>(sdk::numel(out)) * sizeof(T));
    return;
  }
  const int last = out.ndim - 1;
  if (out.ndim >= 2 && a.strides[last] == 1 && out.strides[last] == 1 && out.shape[last] >= kRowCopyMin) {
    // Rows contiguous in both (a slice of columns, a shard of a wider tensor): one memcpy per row,
    // over the outer dims (the same shape and stride arrays, one dim fewer).
    DLTensor outer_a = a, outer_out = out;
    outer_a.ndim = outer_out.ndim = last;
    const T* x = sdk::data_of<const T>(a);
    T* y = sdk::data_of<T>(out);
    const size_t row = static_cast<size_t>(out.shape[last]) * sizeof(T);
    sdk::for_each_offset<2>(last, out.shape, {&outer_a, &outer_out},
                            [&](const std::array<int64_t, 2>& o) { std::memcpy(y + o[1], x + o[0], row); });
    return;
  }
  cast_loop<T, T>(a, out);
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

}  // namespace tessera::cpu
