// Reductions over the trailing `reduce_ndim` dims of the input, one output element per index of
// the leading dims, written to a contiguous output in row-major order (sdk/KERNELS.md).
//
// One thread per output element, folding its row with the SDK's folds (sdk/cpp/reductions.hpp,
// shared with the CPU backend): sequentially in row-major order of the reduced dims, accumulating in
// the output type. That order is the contract ("results are reproducible bit for bit"): a tree
// reduction (CUB's DeviceSegmentedReduce, a warp shuffle) adds floats in a different order and so
// changes the bits of sum, prod and mean.
// max, min, all and any could use one without changing a bit, but their first-NaN rule and the
// argmax/argmin first-occurrence rule fall out of the sequential fold for free, so every op shares it.
#include <cstdint>

#include "checks.hpp"
#include "kernels.hpp"
#include "launch.cuh"
#include "strided_index.cuh"
#include "tessera/sdk/cpp/reductions.hpp"

namespace tessera::cuda {
namespace {

// The reduced elements under one outer index: `first` points at element [0, ..., 0] of the row.
template <class T>
struct Row {
  const T* first;
  const StridedView* dims;  // the reduced dims of the input (its data pointer is unused)
  int64_t size;

  // Calls f(k, x) for every element x, k being its row-major index within the row.
  template <class F>
  __device__ void for_each(F&& f) const {
    for (int64_t k = 0; k < size; ++k) f(k, first[offset_of(*dims, k)]);
  }
};

// The leading `ndim` dims (outer) or trailing ones (inner) of a view, with the same data pointer.
StridedView sub_view(const StridedView& v, int first, int ndim) {
  StridedView sub{};
  sub.data = v.data;
  sub.ndim = ndim;
  int64_t expected = 1;
  sub.contiguous = true;
  for (int d = ndim - 1; d >= 0; --d) {
    sub.shape[d] = v.shape[first + d];
    sub.strides[d] = v.strides[first + d];
    // Row-major without gaps, judged on the dims alone: a dim of size 1 has any stride.
    if (sub.shape[d] != 1 && sub.strides[d] != expected) sub.contiguous = false;
    expected *= sub.shape[d];
  }
  return sub;
}

template <class Op, class T>
__global__ void reduction_device(int64_t outer_numel, StridedView outer, StridedView inner,
                                 int64_t inner_numel, typename Op::template Out<T>* out) {
  const T* a = reinterpret_cast<const T*>(outer.data);
  for (int64_t i = grid_first(); i < outer_numel; i += grid_step())
    out[i] = Op::fold(Row<T>{a + offset_of(outer, i), &inner, inner_numel});
}

template <class Op, class T>
struct Reduction {
  static void run(sdk::KernelArgs& args) {
    using R = typename Op::template Out<T>;
    const sdk::ReductionDims dims = sdk::checked_reduction<Op, T>(args, expect_arity);
    const StridedView view = make_view(args.input(0), Op::name, "input 0");
    const StridedView outer = sub_view(view, 0, dims.outer_ndim);
    const StridedView inner = sub_view(view, dims.outer_ndim, dims.reduced_ndim);
    launch_elements(Op::name, &reduction_device<Op, T>, numel_of(outer), outer, inner, numel_of(inner),
                    sdk::data_of<R>(args.output(0)));
  }
};

}  // namespace

void register_reduction_kernels(sdk::BackendBuilder& b) { sdk::add_reduction_kernels<Reduction>(b); }

}  // namespace tessera::cuda
