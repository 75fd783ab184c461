// softmax and log_softmax over the last dim: the SDK's rules and row computation
// (sdk/cpp/softmax.hpp, shared with the CPU backend).
//
// One thread per row, walking it sequentially: the sum then adds in the CPU backend's order (a
// parallel tree sum would round differently). exp and log are CUDA's, which are within an ulp or
// two of the host libm's, not bit-identical to it.
#include <cstdint>

#include "checks.hpp"
#include "kernels.hpp"
#include "launch.cuh"
#include "strided_index.cuh"
#include "tessera/sdk/cpp/softmax.hpp"

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
__global__ void softmax_device(int64_t num_rows, StridedView a_rows, StridedView out_rows,
                               sdk::SoftmaxRows rows) {
  for (int64_t r = grid_first(); r < num_rows; r += grid_step())
    sdk::softmax_row<T, Log>(reinterpret_cast<const T*>(a_rows.data) + offset_of(a_rows, r),
                             rows.input_stride, reinterpret_cast<T*>(out_rows.data) + offset_of(out_rows, r),
                             rows.output_stride, rows.length);
}

template <class T, bool Log>
void softmax_kernel(sdk::KernelArgs& args) {
  const char* op = Log ? "log_softmax" : "softmax";
  const sdk::SoftmaxRows rows = sdk::checked_softmax(args, op, sdk::dtype_of<T>(), expect_arity);
  const StridedView a_rows = rows_of(make_view(args.input(0), op, "input 0"));
  const StridedView out_rows = rows_of(make_view(args.output(0), op, "output"));
  launch_elements(op, &softmax_device<T, Log>, numel_of(a_rows), a_rows, out_rows, rows);
}

}  // namespace

void register_softmax_kernels(sdk::BackendBuilder& b) {
  b.kernel<&softmax_kernel<float, false>>("softmax", sdk::kFloat32);
  b.kernel<&softmax_kernel<double, false>>("softmax", sdk::kFloat64);
  b.kernel<&softmax_kernel<float, true>>("log_softmax", sdk::kFloat32);
  b.kernel<&softmax_kernel<double, true>>("log_softmax", sdk::kFloat64);
}

}  // namespace tessera::cuda
