// Kernels without inputs that fill their output: fill, arange, eye, uniform, normal. Results equal
// the CPU backend's bit for bit, random ones included (counter_rng_device.cuh; this file is compiled
// with -fmad=false so that no multiply-add is fused, here or in the RNG).
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "checks.hpp"
#include "counter_rng_device.cuh"
#include "kernels.hpp"
#include "launch.cuh"
#include "strided_index.cuh"

namespace tessera::cuda {
namespace {

// No inputs, one output of dtype T; returns the output's device view.
template <class T>
StridedView checked_output(const sdk::KernelArgs& args, const char* op) {
  expect_arity(args, op, 0, 1);
  expect_dtype(op, "output", args.output(0), sdk::dtype_of<T>());
  return make_view(args.output(0), op, "output");
}

template <class T>
__global__ void fill_elements(int64_t n, StridedView out, T value) {
  for (int64_t i = grid_first(); i < n; i += grid_step()) element<T>(out, i) = value;
}

template <class T>
void fill_kernel(sdk::KernelArgs& args) {
  const StridedView out = checked_output<T>(args, "fill");
  const T value = scalar_attr<T>(args, "fill", "value");
  launch_elements("fill", &fill_elements<T>, numel_of(out), out, value);
}

// Integers: start + i * step in uint64 (wraps like the CPU's int64 arithmetic), then narrowed
// modulo 2^bits to T. Floats: in double, then rounded once to T (float32 outputs get one rounding,
// not one per step); -fmad=false keeps "i * step" and "+ start" two roundings, as on the CPU.
template <class T, class Attr>
__global__ void arange_elements(int64_t n, StridedView out, Attr start, Attr step) {
  for (int64_t i = grid_first(); i < n; i += grid_step()) {
    if constexpr (std::is_floating_point_v<T>) {
      element<T>(out, i) = static_cast<T>(start + static_cast<double>(i) * step);
    } else {
      const uint64_t value =
          static_cast<uint64_t>(start) + static_cast<uint64_t>(i) * static_cast<uint64_t>(step);
      element<T>(out, i) = static_cast<T>(value);
    }
  }
}

template <class T>
void arange_kernel(sdk::KernelArgs& args) {
  const StridedView out = checked_output<T>(args, "arange");
  expect_ndim("arange", "output", args.output(0), 1);
  if constexpr (std::is_floating_point_v<T>) {
    const double start = float_attr(args, "arange", "start");
    const double step = float_attr(args, "arange", "step");
    launch_elements("arange", &arange_elements<T, double>, numel_of(out), out, start, step);
  } else {
    const int64_t start = int_attr(args, "arange", "start");
    const int64_t step = int_attr(args, "arange", "step");
    launch_elements("arange", &arange_elements<T, int64_t>, numel_of(out), out, start, step);
  }
}

// out is [rows, columns]: row-major index i is (i / columns, i % columns).
template <class T>
__global__ void eye_elements(int64_t n, StridedView out) {
  const int64_t columns = out.shape[1];
  for (int64_t i = grid_first(); i < n; i += grid_step()) element<T>(out, i) = T(i / columns == i % columns);
}

template <class T>
void eye_kernel(sdk::KernelArgs& args) {
  const StridedView out = checked_output<T>(args, "eye");
  expect_ndim("eye", "output", args.output(0), 2);
  launch_elements("eye", &eye_elements<T>, numel_of(out), out);
}

// Element i (row-major) uses counter offset + i, so the result does not depend on the layout of
// `out`. Computed in double and rounded once to T; a value that rounds up to `high` becomes
// `below_high` (the largest T below it) so that the interval stays half-open.
template <class T>
__global__ void uniform_elements(int64_t n, StridedView out, uint64_t seed, uint64_t offset, double low,
                                 double high, T below_high) {
  for (int64_t i = grid_first(); i < n; i += grid_step()) {
    const T value =
        static_cast<T>(low + (high - low) * counter_rng::uniform(seed, offset + static_cast<uint64_t>(i)));
    element<T>(out, i) = value >= static_cast<T>(high) && high > low ? below_high : value;
  }
}

template <class T>
void uniform_kernel(sdk::KernelArgs& args) {
  const StridedView out = checked_output<T>(args, "uniform");
  const auto seed = static_cast<uint64_t>(int_attr(args, "uniform", "seed"));
  const auto offset = static_cast<uint64_t>(int_attr(args, "uniform", "offset"));
  const double low = float_attr(args, "uniform", "low");
  const double high = float_attr(args, "uniform", "high");
  const T below_high =
      high > low ? std::nextafter(static_cast<T>(high), static_cast<T>(low)) : static_cast<T>(low);
  launch_elements("uniform", &uniform_elements<T>, numel_of(out), out, seed, offset, low, high, below_high);
}

// Element i (row-major) is the standard normal at counter offset + i, scaled; each thread
// recomputes its element's Box-Muller pair, so any element count, start or layout gives the bits
// the CPU backend's blocked loop gives.
template <class T>
__global__ void normal_elements(int64_t n, StridedView out, uint64_t seed, uint64_t offset, double mean,
                                double stddev) {
  for (int64_t i = grid_first(); i < n; i += grid_step()) {
    const uint64_t counter = offset + static_cast<uint64_t>(i);
    T x;
    if constexpr (std::is_same_v<T, float>)
      x = counter_rng::normal_f32(seed, counter);
    else
      x = counter_rng::normal(seed, counter);
    element<T>(out, i) = counter_rng::scale_normal(x, mean, stddev);
  }
}

template <class T>
void normal_kernel(sdk::KernelArgs& args) {
  const StridedView out = checked_output<T>(args, "normal");
  const auto seed = static_cast<uint64_t>(int_attr(args, "normal", "seed"));
  const auto offset = static_cast<uint64_t>(int_attr(args, "normal", "offset"));
  const double mean = float_attr(args, "normal", "mean");
  const double stddev = float_attr(args, "normal", "std");
  launch_elements("normal", &normal_elements<T>, numel_of(out), out, seed, offset, mean, stddev);
}

template <class... Ts>
void add_fill_and_eye(sdk::BackendBuilder& b) {
  (b.kernel<&fill_kernel<Ts>>("fill", sdk::dtype_of<Ts>()), ...);
  (b.kernel<&eye_kernel<Ts>>("eye", sdk::dtype_of<Ts>()), ...);
}

}  // namespace

void register_creation_kernels(sdk::BackendBuilder& b) {
  add_fill_and_eye<float, double, int32_t, int64_t, bool>(b);
  // int8 and uint8 fill with the range check of their own type (through int64 a value too large
  // for them would wrap); bfloat16 and float16 fill as float32 (the core casts).
  b.kernel<&fill_kernel<int8_t>>("fill", sdk::kInt8);
  b.kernel<&fill_kernel<uint8_t>>("fill", sdk::kUInt8);

  b.kernel<&arange_kernel<float>>("arange", sdk::kFloat32);
  b.kernel<&arange_kernel<double>>("arange", sdk::kFloat64);
  b.kernel<&arange_kernel<int32_t>>("arange", sdk::kInt32);
  b.kernel<&arange_kernel<int64_t>>("arange", sdk::kInt64);

  b.kernel<&uniform_kernel<float>>("uniform", sdk::kFloat32);
  b.kernel<&uniform_kernel<double>>("uniform", sdk::kFloat64);
  b.kernel<&normal_kernel<float>>("normal", sdk::kFloat32);
  b.kernel<&normal_kernel<double>>("normal", sdk::kFloat64);
}

}  // namespace tessera::cuda
