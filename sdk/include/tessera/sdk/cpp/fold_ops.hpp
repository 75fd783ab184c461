// The fold kernels of KERNELS.md (fold_add, fold_mul, fold_maximum, fold_minimum, fold_bitwise_*):
// one binary op applied row after row into an accumulator,
//   out = op(...op(op(acc, rows[0]), rows[1])..., rows[n-1])      (acc_side 0)
//   out = op(rows[n-1], ...op(rows[1], op(rows[0], acc))...)      (acc_side 1)
// element by element, with the binary op's own rules (binary_ops.hpp: NaN, bool, wrapping).
//
// Why: a collective's chains of dependent reductions (a ring's reduce-scatter over p ranks is p - 1
// of them in a row) cost one kernel call per link when each link is an element-wise call; a fold
// computes a whole chain in one call, in exactly the chain's order and operand sides, so its bits
// are those of the calls it replaces. The kernels are optional: the core falls back to the
// element-wise kernel, link by link, on a backend without them.
#pragma once

#include <cstdint>
#include <string>

#include "tessera/sdk/cpp/backend_builder.hpp"
#include "tessera/sdk/cpp/binary_ops.hpp"
#include "tessera/sdk/cpp/kernel_checks.hpp"

namespace tessera::sdk {

namespace fold_ops {

// A fold: its KERNELS.md name and the binary op it chains.
#define TESSERA_SDK_FOLD_OP(Name, Binary, text) \
  struct Name {                                 \
    static constexpr const char* name = text;   \
    using Op = binary_ops::Binary;              \
  };
TESSERA_SDK_FOLD_OP(FoldAdd, Add, "fold_add")
TESSERA_SDK_FOLD_OP(FoldMul, Mul, "fold_mul")
TESSERA_SDK_FOLD_OP(FoldMaximum, Maximum, "fold_maximum")
TESSERA_SDK_FOLD_OP(FoldMinimum, Minimum, "fold_minimum")
TESSERA_SDK_FOLD_OP(FoldBitwiseAnd, BitwiseAnd, "fold_bitwise_and")
TESSERA_SDK_FOLD_OP(FoldBitwiseOr, BitwiseOr, "fold_bitwise_or")
TESSERA_SDK_FOLD_OP(FoldBitwiseXor, BitwiseXor, "fold_bitwise_xor")
#undef TESSERA_SDK_FOLD_OP

}  // namespace fold_ops

// What a fold call folds: `rows` rows of `width` elements, the accumulator on the left of the op
// (acc_right false) or on its right.
struct FoldShape {
  int64_t rows;
  int64_t width;
  bool acc_right;
};

// Checks a call of fold `op` on dtype `dtype`: inputs acc [m] and rows [n, m], output [m]
// contiguous, all of `dtype`, and the INT attribute acc_side 0 or 1.
inline FoldShape checked_fold(const KernelArgs& args, const char* op, DLDataType dtype,
                              const ArityCheck& expect_arity) {
  expect_two_in_one_out(args, op, dtype, expect_arity);
  const DLTensor& acc = args.input(0);
  const DLTensor& rows = args.input(1);
  const DLTensor& out = args.output(0);
  expect_ndim(op, "input 0", acc, 1);
  expect_ndim(op, "input 1", rows, 2);
  expect_shape(op, "output", out, acc, "input 0");
  expect_dim(op, "input 1", rows, 1, acc.shape[0], "the width of input 0, the accumulator");
  expect_contiguous(op, "output", out);
  const int64_t side = int_attr(args, op, "acc_side");
  if (side != 0 && side != 1)
    fail_invalid(std::string(op) + ": attribute 'acc_side' is " + std::to_string(side) +
                 ", expected 0 (the accumulator is the op's left operand) or 1 (its right)");
  return FoldShape{rows.shape[0], acc.shape[0], side == 1};
}

// Registers Kernel<Fold, T> for every fold on the dtypes of its binary op (binary_ops.hpp).
template <template <class Fold, class T> class Kernel>
void add_fold_kernels(BackendBuilder& b) {
  using namespace fold_ops;
  add_op_kernels<Kernel, FoldAdd, float, double, int32_t, int64_t, bool>(b);
  add_op_kernels<Kernel, FoldMul, float, double, int32_t, int64_t, bool>(b);
  add_op_kernels<Kernel, FoldMaximum, float, double, int32_t, int64_t, bool>(b);
  add_op_kernels<Kernel, FoldMinimum, float, double, int32_t, int64_t, bool>(b);
  add_op_kernels<Kernel, FoldBitwiseAnd, int32_t, int64_t, bool>(b);
  add_op_kernels<Kernel, FoldBitwiseOr, int32_t, int64_t, bool>(b);
  add_op_kernels<Kernel, FoldBitwiseXor, int32_t, int64_t, bool>(b);
}

// SDK 1.6: registers Kernel<Fold, T> for the floating folds (add, mul, maximum, minimum) on
// T = bfloat16 and float16 (half_precision.hpp). Such a kernel computes each step in float32 and
// rounds its result to T once per step, as a collective that reduces in T step by step (NCCL's
// ring, for one) does:
//   z = from_float<T>(Op::apply(to_float(z), to_float(row[j])))        (sides as the call says)
template <template <class Fold, class T> class Kernel>
void add_half_precision_fold_kernels(BackendBuilder& b) {
  using namespace fold_ops;
  add_op_kernels<Kernel, FoldAdd, bfloat16, float16>(b);
  add_op_kernels<Kernel, FoldMul, bfloat16, float16>(b);
  add_op_kernels<Kernel, FoldMaximum, bfloat16, float16>(b);
  add_op_kernels<Kernel, FoldMinimum, bfloat16, float16>(b);
}

}  // namespace tessera::sdk
