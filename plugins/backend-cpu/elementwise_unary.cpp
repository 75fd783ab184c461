// Element-wise op(a) -> out, same dtype and shape: the SDK's ops (sdk/cpp/unary_ops.hpp, shared with
// the CUDA backend) over strided tensors.
#include <array>
#include <cstdint>

#include "checks.hpp"
#include "kernels.hpp"
#include "tessera/sdk/cpp/strided_loop.hpp"
#include "tessera/sdk/cpp/unary_ops.hpp"

namespace tessera::cpu {
namespace {

template <class Op, class T>
struct Unary {
  static void run(sdk::KernelArgs& args) {
    sdk::expect_unary(args, Op::name, sdk::dtype_of<T>(), expect_arity);
    const DLTensor& a = args.input(0);
    const DLTensor& out = args.output(0);
    const T* x = sdk::data_of<const T>(a);
    T* y = sdk::data_of<T>(out);
    sdk::for_each_offset<2>(out.ndim, out.shape, {&a, &out},
                            [&](const std::array<int64_t, 2>& o) { y[o[1]] = Op::apply(x[o[0]]); });
  }
};

}  // namespace

void register_unary_kernels(sdk::BackendBuilder& b) { sdk::add_unary_kernels<Unary>(b); }

}  // namespace tessera::cpu
