// softmax and log_softmax over the last dim: the SDK's rules and row computation
// (sdk/cpp/softmax.hpp, shared with the CUDA backend), one row after another.
#include <array>
#include <cstdint>

#include "checks.hpp"
#include "kernels.hpp"
#include "tessera/sdk/cpp/softmax.hpp"
#include "tessera/sdk/cpp/strided_loop.hpp"
#include "views.hpp"

namespace tessera::cpu {
namespace {

template <class T, bool Log>
void softmax_kernel(sdk::KernelArgs& args) {
  const char* op = Log ? "log_softmax" : "softmax";
  const sdk::SoftmaxRows rows = sdk::checked_softmax(args, op, sdk::dtype_of<T>(), expect_arity);
  const DLTensor a_rows = leading_dims(args.input(0), rows.row_ndim);
  const DLTensor out_rows = leading_dims(args.output(0), rows.row_ndim);
  const T* x = sdk::data_of<const T>(args.input(0));
  T* y = sdk::data_of<T>(args.output(0));
  sdk::for_each_offset<2>(
      a_rows.ndim, a_rows.shape, {&a_rows, &out_rows}, [&](const std::array<int64_t, 2>& o) {
        sdk::softmax_row<T, Log>(x + o[0], rows.input_stride, y + o[1], rows.output_stride, rows.length);
      });
}

}  // namespace

void register_softmax_kernels(sdk::BackendBuilder& b) {
  b.kernel<&softmax_kernel<float, false>>("softmax", sdk::kFloat32);
  b.kernel<&softmax_kernel<double, false>>("softmax", sdk::kFloat64);
  b.kernel<&softmax_kernel<float, true>>("log_softmax", sdk::kFloat32);
  b.kernel<&softmax_kernel<double, true>>("log_softmax", sdk::kFloat64);
}

}  // namespace tessera::cpu
