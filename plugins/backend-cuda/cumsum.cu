// cumsum over the last dim on the GPU: one thread per row, walking it left to right, so the sums
// round exactly as the CPU backend's do (a parallel scan would add in another order).
#include <cstdint>
#include <type_traits>

#include "checks.hpp"
#include "kernels.hpp"
#include "launch.cuh"
#include "strided_index.cuh"
#include "tessera/sdk/cpp/transformer_kernels.hpp"

namespace tessera::cuda {
namespace {

// The leading dims of a view (all but the last): one row each.
StridedView cumsum_rows_of(const StridedView& v) {
  StridedView rows = v;
  rows.ndim = v.ndim == 0 ? 0 : v.ndim - 1;
  rows.contiguous = false;  // a row's start goes through the strides, it is not its index
  return rows;
}

template <class T>
__device__ T wrapping_plus(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}

template <class T>
__global__ void cumsum_device(int64_t num_rows, StridedView a_rows, StridedView out_rows, int64_t length,
                              int64_t a_stride, int64_t out_stride) {
  for (int64_t r = grid_first(); r < num_rows; r += grid_step()) {
    const T* x = reinterpret_cast<const T*>(a_rows.data) + offset_of(a_rows, r);
    T* y = reinterpret_cast<T*>(out_rows.data) + offset_of(out_rows, r);
    T running = T(0);
    for (int64_t j = 0; j < length; ++j) {
      running = wrapping_plus(running, x[j * a_stride]);
      y[j * out_stride] = running;
    }
  }
}

template <class T>
void cumsum_kernel(sdk::KernelArgs& args) {
  sdk::expect_unary(args, "cumsum", sdk::dtype_of<T>(), expect_arity);
  const DLTensor& a = args.input(0);
  const DLTensor& out = args.output(0);
  const int last = a.ndim - 1;
  // A 0-d tensor is one row of one element.
  const int64_t length = a.ndim == 0 ? 1 : a.shape[last];
  const int64_t a_stride = a.ndim == 0 ? 0 : a.strides[last];
  const int64_t out_stride = a.ndim == 0 ? 0 : out.strides[last];
  if (length == 0) return;
  const StridedView a_rows = cumsum_rows_of(make_view(a, "cumsum", "input 0"));
  const StridedView out_rows = cumsum_rows_of(make_view(out, "cumsum", "output"));
  launch_elements("cumsum", &cumsum_device<T>, numel_of(a_rows), a_rows, out_rows, length, a_stride,
                  out_stride);
}

// Registered on the catalogue's dtypes by sdk::add_cumsum_kernels.
template <class Op, class T>
struct CumsumKernel {
  static void run(sdk::KernelArgs& args) { cumsum_kernel<T>(args); }
};

}  // namespace

void register_cumsum_kernels(sdk::BackendBuilder& b) { sdk::add_cumsum_kernels<CumsumKernel>(b); }

}  // namespace tessera::cuda
