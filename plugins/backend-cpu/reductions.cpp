// Reductions over the trailing `reduce_ndim` dims of the input; one output element per index of the
// leading dims, written to a contiguous output in row-major order. The argument rules and the folds
// are the SDK's (sdk/cpp/reductions.hpp), shared with the CUDA backend; this file walks the rows.
#include <array>
#include <cstdint>

#include "checks.hpp"
#include "kernels.hpp"
#include "tessera/sdk/cpp/reductions.hpp"
#include "tessera/sdk/cpp/strided_loop.hpp"
#include "views.hpp"

namespace tessera::cpu {
namespace {

// The reduced elements under one outer index.
template <class T>
struct Row {
  const T* first;
  const DLTensor* dims;  // the reduced dims of the input; offsets are relative to `first`
  int64_t size;

  // Calls f(k, x) for every element x, k being its row-major index within the row.
  template <class F>
  void for_each(F&& f) const {
    int64_t k = 0;
    sdk::for_each_offset<1>(dims->ndim, dims->shape, {dims},
                            [&](const std::array<int64_t, 1>& o) { f(k++, first[o[0]]); });
  }
};

template <class Op, class T>
struct Reduction {
  static void run(sdk::KernelArgs& args) {
    using R = typename Op::template Out<T>;
    const sdk::ReductionDims dims = sdk::checked_reduction<Op, T>(args, expect_arity);
    const DLTensor& input = args.input(0);
    const DLTensor outer = leading_dims(input, dims.outer_ndim);  // one output element each
    const DLTensor inner = trailing_dims(input, dims.reduced_ndim);
    const int64_t inner_numel = sdk::numel(inner);
    const T* a = sdk::data_of<const T>(input);
    R* out = sdk::data_of<R>(args.output(0));
    int64_t i = 0;
    sdk::for_each_offset<1>(outer.ndim, outer.shape, {&outer}, [&](const std::array<int64_t, 1>& o) {
      out[i++] = Op::fold(Row<T>{a + o[0], &inner, inner_numel});
    });
  }
};

}  // namespace

void register_reduction_kernels(sdk::BackendBuilder& b) { sdk::add_reduction_kernels<Reduction>(b); }

}  // namespace tessera::cpu
