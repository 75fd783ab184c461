// where(cond, a, b) -> out on the GPU: out = cond ? a : b, one thread per element. The core has
// broadcast the operands to the output's shape (stride 0), so one linear index names the same
// element in each.
#include <cstdint>

#include "checks.hpp"
#include "kernels.hpp"
#include "launch.cuh"
#include "strided_index.cuh"
#include "tessera/sdk/cpp/transformer_kernels.hpp"

namespace tessera::cuda {
namespace {

template <class T>
__global__ void where_elements(int64_t n, StridedView cond, StridedView a, StridedView b, StridedView out) {
  const bool* c = reinterpret_cast<const bool*>(cond.data);
  const T* x = reinterpret_cast<const T*>(a.data);
  const T* y = reinterpret_cast<const T*>(b.data);
  T* z = reinterpret_cast<T*>(out.data);
  for (int64_t i = grid_first(); i < n; i += grid_step())
    z[offset_of(out, i)] = c[offset_of(cond, i)] ? x[offset_of(a, i)] : y[offset_of(b, i)];
}

template <class T>
void where_kernel(sdk::KernelArgs& args) {
  expect_arity(args, "where", 3, 1);
  expect_dtype("where", "input 0 (cond)", args.input(0), sdk::kBool);
  expect_dtype("where", "input 1", args.input(1), sdk::dtype_of<T>());
  expect_dtype("where", "input 2", args.input(2), sdk::dtype_of<T>());
  expect_dtype("where", "output", args.output(0), sdk::dtype_of<T>());
  expect_shape("where", "input 0", args.input(0), args.output(0), "output");
  expect_shape("where", "input 1", args.input(1), args.output(0), "output");
  expect_shape("where", "input 2", args.input(2), args.output(0), "output");
  const StridedView out = make_view(args.output(0), "where", "output");
  launch_elements("where", &where_elements<T>, numel_of(out), make_view(args.input(0), "where", "input 0"),
                  make_view(args.input(1), "where", "input 1"), make_view(args.input(2), "where", "input 2"),
                  out);
}

// Registered on the catalogue's dtypes by sdk::add_where_kernels.
template <class Op, class T>
struct WhereKernel {
  static void run(sdk::KernelArgs& args) { where_kernel<T>(args); }
};

}  // namespace

void register_where_kernels(sdk::BackendBuilder& b) { sdk::add_where_kernels<WhereKernel>(b); }

}  // namespace tessera::cuda
