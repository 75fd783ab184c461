// where(cond, a, b) -> out: out = cond ? a : b element by element, over strided tensors of one shape
// (the core has broadcast them: a broadcast dim has stride 0).
#include <array>
#include <cstdint>

#include "checks.hpp"
#include "kernels.hpp"
#include "tessera/sdk/cpp/strided_loop.hpp"
#include "tessera/sdk/cpp/transformer_kernels.hpp"
#include "vector_clones.hpp"

namespace tessera::cpu {
namespace {

// The common case, every operand contiguous (no broadcast): a select per element, the same bits at
// every vector width, so the loop carries the vector clones.
template <class T>
TESSERA_CPU_VECTOR_CLONES void select_contiguous(const bool* c, const T* x, const T* y, T* z, int64_t n) {
  for (int64_t i = 0; i < n; ++i) z[i] = c[i] ? x[i] : y[i];
}

template <class T>
void where_kernel(sdk::KernelArgs& args) {
  expect_arity(args, "where", 3, 1);
  expect_dtype("where", "input 0 (cond)", args.input(0), sdk::kBool);
  expect_dtype("where", "input 1", args.input(1), sdk::dtype_of<T>());
  expect_dtype("where", "input 2", args.input(2), sdk::dtype_of<T>());
  expect_dtype("where", "output", args.output(0), sdk::dtype_of<T>());
  const DLTensor& out = args.output(0);
  for (size_t i = 0; i < 3; ++i)
    expect_shape("where", i == 0 ? "input 0" : i == 1 ? "input 1" : "input 2", args.input(i), out, "output");
  const bool* c = sdk::data_of<const bool>(args.input(0));
  const T* x = sdk::data_of<const T>(args.input(1));
  const T* y = sdk::data_of<const T>(args.input(2));
  T* z = sdk::data_of<T>(out);
  if (sdk::is_contiguous(args.input(0)) && sdk::is_contiguous(args.input(1)) &&
      sdk::is_contiguous(args.input(2)) && sdk::is_contiguous(out))
    return select_contiguous(c, x, y, z, sdk::numel(out));
  sdk::for_each_offset<4>(out.ndim, out.shape, {&args.input(0), &args.input(1), &args.input(2), &out},
                          [&](const std::array<int64_t, 4>& o) { z[o[3]] = c[o[0]] ? x[o[1]] : y[o[2]]; });
}

// Registered on the catalogue's dtypes by sdk::add_where_kernels.
template <class Op, class T>
struct WhereKernel {
  static void run(sdk::KernelArgs& args) { where_kernel<T>(args); }
};

}  // namespace

void register_where_kernels(sdk::BackendBuilder& b) { sdk::add_where_kernels<WhereKernel>(b); }

}  // namespace tessera::cpu
