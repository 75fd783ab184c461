// cumsum over the last dim: each row's running sum, left to right in the tensor's own dtype
// (int64 wraps through the unsigned type, as PyTorch's sums do). The core sums integer inputs as
// int64, so that is the only integer dtype. Rows lying side by side in memory (a cumsum along
// another dim of a row-major tensor, moved last by the core) are summed together, a vector of rows
// a step.
#include <array>
#include <cstdint>
#include <type_traits>

#include "checks.hpp"
#include "kernels.hpp"
#include "tessera/sdk/cpp/strided_loop.hpp"
#include "tessera/sdk/cpp/transformer_kernels.hpp"
#include "vector_clones.hpp"
#include "views.hpp"

namespace tessera::cpu {
namespace {

template <class T>
T plus(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}

// `width` rows side by side (row r's elements start at x + r and y + r), each of `length` elements
// `xs` and `ys` apart: a cumsum along a dim that is not the tensor's last, the core having moved it
// last. Each step adds one element to its row's running sum, as the row-by-row loop does (the
// first from +0), so the bits are the same; the steps of `width` rows are one vector loop, cloned
// per vector width (vector_clones.hpp).
template <class T>
TESSERA_CPU_VECTOR_CLONES void cumsum_side_by_side(const T* x, int64_t xs, T* y, int64_t ys, int64_t width,
                                                   int64_t length) {
  if (length == 0) return;
  for (int64_t r = 0; r < width; ++r) y[r] = plus(T(0), x[r]);
  for (int64_t j = 1; j < length; ++j) {
    const T* xj = x + j * xs;
    const T* before = y + (j - 1) * ys;
    T* yj = y + j * ys;
    for (int64_t r = 0; r < width; ++r) yj[r] = plus(before[r], xj[r]);
  }
}

template <class T>
void cumsum_kernel(sdk::KernelArgs& args) {
  sdk::expect_unary(args, "cumsum", sdk::dtype_of<T>(), expect_arity);
  const DLTensor& a = args.input(0);
  const DLTensor& out = args.output(0);
  const T* x = sdk::data_of<const T>(a);
  T* y = sdk::data_of<T>(out);
  if (a.ndim == 0) {
    y[0] = x[0];
    return;
  }
  const int last = a.ndim - 1;
  const int64_t length = a.shape[last];
  const int64_t xs = a.strides[last];
  const int64_t ys = out.strides[last];
  const DLTensor a_rows = leading_dims(a, last);
  const DLTensor out_rows = leading_dims(out, last);
  // Neighbouring rows one element apart in both (the dim summed was not the last): the rows of the
  // dim before the summed one run side by side.
  if (last >= 1 && a.strides[last - 1] == 1 && out.strides[last - 1] == 1) {
    const DLTensor a_outer = leading_dims(a, last - 1);
    const DLTensor out_outer = leading_dims(out, last - 1);
    const int64_t width = a.shape[last - 1];
    sdk::for_each_offset<2>(a_outer.ndim, a_outer.shape, {&a_outer, &out_outer},
                            [&](const std::array<int64_t, 2>& o) {
                              cumsum_side_by_side(x + o[0], xs, y + o[1], ys, width, length);
                            });
    return;
  }
  sdk::for_each_offset<2>(a_rows.ndim, a_rows.shape, {&a_rows, &out_rows},
                          [&](const std::array<int64_t, 2>& o) {
                            T running = T(0);
                            for (int64_t j = 0; j < length; ++j) {
                              running = plus(running, x[o[0] + j * xs]);
                              y[o[1] + j * ys] = running;
                            }
                          });
}

// Registered on the catalogue's dtypes by sdk::add_cumsum_kernels.
template <class Op, class T>
struct CumsumKernel {
  static void run(sdk::KernelArgs& args) { cumsum_kernel<T>(args); }
};

}  // namespace

void register_cumsum_kernels(sdk::BackendBuilder& b) { sdk::add_cumsum_kernels<CumsumKernel>(b); }

}  // namespace tessera::cpu
