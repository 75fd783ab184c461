// Header-only rules of the indexing kernels (gather, scatter_add; sdk/KERNELS.md "Indexing"),
// shared by the CPU and CUDA backends so that both refuse the same calls with the same messages.
#pragma once

#include <cstdint>
#include <string>

#include "tessera/sdk/cpp/backend_builder.hpp"
#include "tessera/sdk/cpp/kernel_checks.hpp"

namespace tessera::sdk {

// The `dim` attribute, checked against `a`; index checked to be int64 and to fit a's shape (same
// ndim, every dim but `dim` at most a's).
inline int checked_index_dim(const KernelArgs& args, const char* op, const DLTensor& a,
                             const DLTensor& index) {
  expect_dtype(op, "input 1 (index)", index, kInt64);
  const int64_t dim = int_attr(args, op, "dim");
  if (a.ndim == 0 || dim < 0 || dim >= a.ndim)
    fail_invalid(std::string(op) + ": attribute 'dim' is " + std::to_string(dim) + ", expected 0.." +
                 std::to_string(a.ndim - 1) + " (input 0 has shape " + shape_text(a) + ")");
  if (index.ndim != a.ndim)
    fail_invalid(std::string(op) + ": input 1 (index) has shape " + shape_text(index) + ", expected " +
                 std::to_string(a.ndim) + " dims as input 0 (shape " + shape_text(a) + ")");
  for (int d = 0; d < a.ndim; ++d)
    if (d != dim && index.shape[d] > a.shape[d])
      fail_invalid(std::string(op) + ": input 1 (index) has shape " + shape_text(index) +
                   ", expected at most " + std::to_string(a.shape[d]) + " in dim " + std::to_string(d) +
                   " (input 0 has shape " + shape_text(a) + ")");
  return static_cast<int>(dim);
}

// The error of an index value outside [0, size of a's dim `dim`).
[[noreturn, gnu::cold, gnu::noinline]] inline void fail_index_out_of_range(const char* op, int64_t value,
                                                                           int dim, const DLTensor& a) {
  fail_invalid(std::string(op) + ": index " + std::to_string(value) + " is out of range for dim " +
               std::to_string(dim) + " of size " + std::to_string(a.shape[dim]) + " (input 0 has shape " +
               shape_text(a) + "), expected 0.." + std::to_string(a.shape[dim] - 1));
}

// ---- The catalogue: gather on all five dtypes, scatter_add on the four numeric ones. A backend
// writes Kernel<Op, T>::run(KernelArgs&) (Op::name, Op::gather: gather rather than scatter_add)
// and registers both with
//   sdk::add_indexing_kernels<MyIndexing>(builder);

namespace indexing_ops {
struct Gather {
  static constexpr const char* name = "gather";
  static constexpr bool gather = true;
};
struct ScatterAdd {
  static constexpr const char* name = "scatter_add";
  static constexpr bool gather = false;
};
}  // namespace indexing_ops

template <template <class Op, class T> class Kernel>
void add_indexing_kernels(BackendBuilder& b) {
  add_op_kernels<Kernel, indexing_ops::Gather, float, double, int32_t, int64_t, bool>(b);
  add_op_kernels<Kernel, indexing_ops::ScatterAdd, float, double, int32_t, int64_t>(b);
}

}  // namespace tessera::sdk
