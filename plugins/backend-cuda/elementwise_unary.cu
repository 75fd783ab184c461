// Element-wise op(a) -> out on the GPU, same dtype and shape: the SDK's ops (sdk/cpp/unary_ops.hpp,
// shared with the CPU backend), one thread per element. The float functions are CUDA's (within a
// few ulp of the host's libm, not bit-equal, which KERNELS.md does not ask of them).
#include <cstdint>

#include "checks.hpp"
#include "kernels.hpp"
#include "launch.cuh"
#include "strided_index.cuh"
#include "tessera/sdk/cpp/unary_ops.hpp"

namespace tessera::cuda {
namespace {

template <class Op, class T>
__global__ void unary_elements(int64_t n, StridedView a, StridedView out) {
  const T* x = reinterpret_cast<const T*>(a.data);
  T* y = reinterpret_cast<T*>(out.data);
  for (int64_t i = grid_first(); i < n; i += grid_step())
    y[offset_of(out, i)] = Op::template apply<T>(x[offset_of(a, i)]);
}

template <class Op, class T>
struct Unary {
  static void run(sdk::KernelArgs& args) {
    sdk::expect_unary(args, Op::name, sdk::dtype_of<T>(), expect_arity);
    const StridedView out = make_view(args.output(0), Op::name, "output");
    launch_elements(Op::name, &unary_elements<Op, T>, numel_of(out),
                    make_view(args.input(0), Op::name, "input 0"), out);
  }
};

}  // namespace

void register_unary_kernels(sdk::BackendBuilder& b) { sdk::add_unary_kernels<Unary>(b); }

}  // namespace tessera::cuda
