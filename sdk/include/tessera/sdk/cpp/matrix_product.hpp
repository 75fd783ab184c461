// The shape rules of mm and bmm (KERNELS.md), checked the same way by every backend that has them:
// a [m, k] x [k, n] -> [m, n] product, or a batch of them, with the sizes and element strides a
// kernel needs. Header-only, host code.
#pragma once

#include <cstdint>

#include "tessera/sdk/cpp/kernel_checks.hpp"

namespace tessera::sdk {

// Sizes and element strides of one call; mm is bmm with batch 1 and batch strides 0.
struct MatrixProduct {
  int64_t batch, m, k, n;
  int64_t a_batch, a_row, a_col;
  int64_t b_batch, b_row, b_col;
};

// Two inputs and one contiguous output of `dtype`, each 2-d (3-d when `batched`), with matching
// batch, k, m and n; the failure names the dim and where its expected size comes from.
inline MatrixProduct checked_matrix_product(const KernelArgs& args, const char* op, bool batched,
                                            DLDataType dtype, const ArityCheck& expect_arity) {
  expect_two_in_one_out(args, op, dtype, expect_arity);
  const DLTensor& a = args.input(0);
  const DLTensor& b = args.input(1);
  const DLTensor& out = args.output(0);
  const int d = batched ? 1 : 0;  // the first matrix dim
  expect_ndim(op, "input 0", a, d + 2);
  expect_ndim(op, "input 1", b, d + 2);
  expect_ndim(op, "output", out, d + 2);
  if (batched) {
    expect_dim(op, "input 1", b, 0, a.shape[0], "the batch size, dim 0 of input 0");
    expect_dim(op, "output", out, 0, a.shape[0], "the batch size, dim 0 of input 0");
  }
  expect_dim(op, "input 1", b, d, a.shape[d + 1], "k, the last dim of input 0");
  expect_dim(op, "output", out, d, a.shape[d], "m, the rows of input 0");
  expect_dim(op, "output", out, d + 1, b.shape[d + 1], "n, the last dim of input 1");
  expect_contiguous(op, "output", out);
  return MatrixProduct{batched ? a.shape[0] : 1,
                       a.shape[d],
                       a.shape[d + 1],
                       b.shape[d + 1],
                       batched ? a.strides[0] : 0,
                       a.strides[d],
                       a.strides[d + 1],
                       batched ? b.strides[0] : 0,
                       b.strides[d],
                       b.strides[d + 1]};
}

}  // namespace tessera::sdk
