// Kernels without inputs that fill their output: fill, arange, eye, uniform, normal.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "checks.hpp"
#include "kernels.hpp"
#include "parallel_tasks.hpp"
#include "tessera/sdk/cpp/counter_rng.hpp"
#include "tessera/sdk/cpp/strided_loop.hpp"
#include "tessera/sdk/cpp/host_device.hpp"
#include "vector_clones.hpp"

namespace tessera::cpu {
namespace {

template <class T>
const DLTensor& checked_output(const sdk::KernelArgs& args, const char* op) {
  expect_arity(args, op, 0, 1);
  const DLTensor& out = args.output(0);
  expect_dtype(op, "output", out, sdk::dtype_of<T>());
  return out;
}

template <class T>
void fill_kernel(sdk::KernelArgs& args) {
  const DLTensor& out = checked_output<T>(args, "fill");
  const T value = scalar_attr<T>(args, "fill", "value");
  T* y = sdk::data_of<T>(out);
  sdk::for_each_offset<1>(out.ndim, out.shape, {&out},
                          [&](const std::array<int64_t, 1>& o) { y[o[0]] = value; });
}

// Integers: computed in int64 with wraparound, then narrowed (modular) to the output type.
// Floats: computed in double so that f32 outputs get one rounding, not one per step.
template <class T>
void arange_kernel(sdk::KernelArgs& args) {
  const DLTensor& out = checked_output<T>(args, "arange");
  expect_ndim("arange", "output", out, 1);
  T* y = sdk::data_of<T>(out);
  const int64_t n = out.shape[0];
  const int64_t stride = out.strides[0];
  if constexpr (std::is_floating_point_v<T>) {
    const double start = float_attr(args, "arange", "start");
    const double step = float_attr(args, "arange", "step");
    for (int64_t i = 0; i < n; ++i) y[i * stride] = static_cast<T>(start + static_cast<double>(i) * step);
  } else {
    const int64_t start = int_attr(args, "arange", "start");
    const int64_t step = int_attr(args, "arange", "step");
    for (int64_t i = 0; i < n; ++i)
      y[i * stride] = static_cast<T>(sdk::hd::arithmetic(start, sdk::hd::arithmetic(i, step, '*'), '+'));
  }
}

template <class T>
void eye_kernel(sdk::KernelArgs& args) {
  const DLTensor& out = checked_output<T>(args, "eye");
  expect_ndim("eye", "output", out, 2);
  T* y = sdk::data_of<T>(out);
  for (int64_t i = 0; i < out.shape[0]; ++i)
    for (int64_t j = 0; j < out.shape[1]; ++j) y[i * out.strides[0] + j * out.strides[1]] = T(i == j);
}

// Element i (row-major) uses counter offset + i, so the result does not depend on the layout of
// `out` or on how the core splits a tensor between calls.
template <class T>
void uniform_kernel(sdk::KernelArgs& args) {
  const DLTensor& out = checked_output<T>(args, "uniform");
  const auto seed = static_cast<uint64_t>(int_attr(args, "uniform", "seed"));
  const auto offset = static_cast<uint64_t>(int_attr(args, "uniform", "offset"));
  const double low = float_attr(args, "uniform", "low");
  const double high = float_attr(args, "uniform", "high");
  T* y = sdk::data_of<T>(out);
  // Rounding to float32 can carry a value just below `high` up to it; the interval stays half-open.
  const T below_high =
      high > low ? std::nextafter(static_cast<T>(high), static_cast<T>(low)) : static_cast<T>(low);
  uint64_t i = 0;
  sdk::for_each_offset<1>(out.ndim, out.shape, {&out}, [&](const std::array<int64_t, 1>& o) {
    const T value = static_cast<T>(low + (high - low) * sdk::counter_rng::uniform(seed, offset + i++));
    y[o[0]] = value >= static_cast<T>(high) && high > low ? below_high : value;
  });
}

// counter_rng::normal_block, compiled for each vector unit (vector_clones.hpp; flatten inlines the
// block's loops into each clone). Its transform is IEEE +, -, *, / and sqrt alone, never contracted
// into fused multiply-adds in this file, so every clone computes the reference's bits.
template <class T>
TESSERA_CPU_VECTOR_CLONES __attribute__((flatten)) void cloned_normal_block(uint64_t seed, uint64_t first,
                                                                            int64_t count, T* out) {
  sdk::counter_rng::normal_block(seed, first, count, out);
}

// Elements are cut into chunks of a fixed size, shared out over the kernel threads: each chunk is
// normal_block over its own counters, so neither the thread count nor where a chunk starts (odd
// counters included) changes a value.
template <class T>
void normal_kernel(sdk::KernelArgs& args) {
  const DLTensor& out = checked_output<T>(args, "normal");
  const auto seed = static_cast<uint64_t>(int_attr(args, "normal", "seed"));
  const auto offset = static_cast<uint64_t>(int_attr(args, "normal", "offset"));
  const double mean = float_attr(args, "normal", "mean");
  const double stddev = float_attr(args, "normal", "std");
  int64_t numel = 1;
  for (int d = 0; d < out.ndim; ++d) numel *= out.shape[d];
  if (numel == 0) return;
  const bool contiguous = sdk::is_contiguous(out);
  std::vector<T> staging(contiguous ? 0 : static_cast<size_t>(numel));
  T* y = contiguous ? sdk::data_of<T>(out) : staging.data();

  constexpr int64_t kChunk = int64_t{1} << 16;
  const int64_t chunks = (numel + kChunk - 1) / kChunk;
  run_tasks(chunks, static_cast<int>(std::min<int64_t>(product_threads(), chunks)), [&](int64_t chunk) {
    const int64_t begin = chunk * kChunk;
    const int64_t count = std::min(kChunk, numel - begin);
    T* part = y + begin;
    cloned_normal_block(seed, offset + static_cast<uint64_t>(begin), count, part);
    if (mean != 0.0 || stddev != 1.0)
      for (int64_t i = 0; i < count; ++i) part[i] = sdk::counter_rng::scale_normal(part[i], mean, stddev);
  });
  if (contiguous) return;
  // A strided output: element i in row-major order takes counter offset + i, as for any layout.
  T* dst = sdk::data_of<T>(out);
  int64_t i = 0;
  sdk::for_each_offset<1>(out.ndim, out.shape, {&out},
                          [&](const std::array<int64_t, 1>& o) { dst[o[0]] = staging[i++]; });
}

}  // namespace

void register_creation_kernels(sdk::BackendBuilder& b) {
  b.kernel<&fill_kernel<float>>("fill", sdk::kFloat32);
  b.kernel<&fill_kernel<double>>("fill", sdk::kFloat64);
  b.kernel<&fill_kernel<int32_t>>("fill", sdk::kInt32);
  b.kernel<&fill_kernel<int64_t>>("fill", sdk::kInt64);
  b.kernel<&fill_kernel<bool>>("fill", sdk::kBool);
  // int8 and uint8 have fills of their own for the range check a value too large for them gets
  // (the core would otherwise fill through int64 and wrap); bfloat16 and float16 fill as float32.
  b.kernel<&fill_kernel<int8_t>>("fill", sdk::kInt8);
  b.kernel<&fill_kernel<uint8_t>>("fill", sdk::kUInt8);

  b.kernel<&arange_kernel<float>>("arange", sdk::kFloat32);
  b.kernel<&arange_kernel<double>>("arange", sdk::kFloat64);
  b.kernel<&arange_kernel<int32_t>>("arange", sdk::kInt32);
  b.kernel<&arange_kernel<int64_t>>("arange", sdk::kInt64);

  b.kernel<&eye_kernel<float>>("eye", sdk::kFloat32);
  b.kernel<&eye_kernel<double>>("eye", sdk::kFloat64);
  b.kernel<&eye_kernel<int32_t>>("eye", sdk::kInt32);
  b.kernel<&eye_kernel<int64_t>>("eye", sdk::kInt64);
  b.kernel<&eye_kernel<bool>>("eye", sdk::kBool);

  b.kernel<&uniform_kernel<float>>("uniform", sdk::kFloat32);
  b.kernel<&uniform_kernel<double>>("uniform", sdk::kFloat64);
  b.kernel<&normal_kernel<float>>("normal", sdk::kFloat32);
  b.kernel<&normal_kernel<double>>("normal", sdk::kFloat64);
}

}  // namespace tessera::cpu
