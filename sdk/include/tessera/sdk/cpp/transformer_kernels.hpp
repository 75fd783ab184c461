// The SDK 1.6 kernels where and cumsum (KERNELS.md, "SDK 1.6 kernels") on their catalogue key
// dtypes, so that a backend does not list the dtypes itself. A backend writes each kernel once, as
// Kernel<Op, T>::run(KernelArgs&) (Op carries the op's name), and registers it with
//   sdk::add_where_kernels<MyWhere>(builder);  sdk::add_cumsum_kernels<MyCumsum>(builder);
// (sin and cos are unary ops: unary_ops.hpp; gather and scatter_add: indexing.hpp.)
#pragma once

#include <cstdint>

#include "tessera/sdk/cpp/backend_builder.hpp"

namespace tessera::sdk {

namespace transformer_ops {
struct Where {
  static constexpr const char* name = "where";
};
struct Cumsum {
  static constexpr const char* name = "cumsum";
};
}  // namespace transformer_ops

// where: all five dtypes (of a, b and out; cond is bool).
template <template <class Op, class T> class Kernel>
void add_where_kernels(BackendBuilder& b) {
  add_op_kernels<Kernel, transformer_ops::Where, float, double, int32_t, int64_t, bool>(b);
}

// cumsum: f32 f64 i64 (the core sums integer and bool inputs as int64).
template <template <class Op, class T> class Kernel>
void add_cumsum_kernels(BackendBuilder& b) {
  add_op_kernels<Kernel, transformer_ops::Cumsum, float, double, int64_t>(b);
}

}  // namespace tessera::sdk
