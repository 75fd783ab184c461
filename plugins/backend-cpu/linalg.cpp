// Matrix products: mm ([m, k] x [k, n]) and bmm (the same per batch). f32/f64 go to OpenBLAS gemm;
// i32/i64 are a plain i-k-j loop with wraparound accumulation in the element type.
#include <cblas.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "checks.hpp"
#include "kernels.hpp"
#include "scalar.hpp"

namespace tessera::cpu {
namespace {

// Sizes and element strides of one call; mm is bmm with batch 1 and batch strides 0.
struct Product {
  int64_t batch, m, k, n;
  int64_t a_batch, a_row, a_col;
  int64_t b_batch, b_row, b_col;
};

Product checked_product(const sdk::KernelArgs& args, const char* op, bool batched, DLDataType dtype) {
  expect_arity(args, op, 2, 1);
  const DLTensor& a = args.input(0);
  const DLTensor& b = args.input(1);
  const DLTensor& out = args.output(0);
  expect_dtype(op, "input 0", a, dtype);
  expect_dtype(op, "input 1", b, dtype);
  expect_dtype(op, "output", out, dtype);
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
  return Product{batched ? a.shape[0] : 1,
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

// How one [rows, cols] operand reaches gemm: in place, row-major (NoTrans) or column-major (Trans),
// when one dim has unit stride and the other a stride gemm accepts as leading dimension; otherwise
// packed into a contiguous copy. A size-1 dim is never stepped over, so its stride does not matter.
struct Operand {
  bool in_place;
  CBLAS_TRANSPOSE trans;
  blasint ld;
};

Operand plan_operand(int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride) {
  constexpr int64_t kMaxLd = std::numeric_limits<blasint>::max();
  const auto usable_ld = [&](int64_t stride, int64_t minimum) {
    return stride >= std::max<int64_t>(1, minimum) && stride <= kMaxLd;
  };
  if ((cols == 1 || col_stride == 1) && (rows == 1 || usable_ld(row_stride, cols)))
    return {true, CblasNoTrans, static_cast<blasint>(rows == 1 ? std::max<int64_t>(1, cols) : row_stride)};
  if ((rows == 1 || row_stride == 1) && (cols == 1 || usable_ld(col_stride, rows)))
    return {true, CblasTrans, static_cast<blasint>(cols == 1 ? std::max<int64_t>(1, rows) : col_stride)};
  return {false, CblasNoTrans, static_cast<blasint>(cols)};
}

template <class T>
void pack(const T* src, int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride, T* dst) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) dst[i * cols + j] = src[i * row_stride + j * col_stride];
}

void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, blasint m, blasint n, blasint k, const float* a,
          blasint lda, const float* b, blasint ldb, float* c) {
  cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, n);
}

void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, blasint m, blasint n, blasint k, const double* a,
          blasint lda, const double* b, blasint ldb, double* c) {
  cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, 1.0, a, lda, b, ldb, 0.0, c, n);
}

// Requires m, n, k >= 1: gemm rejects leading dimensions of 0.
template <class T>
void blas_product(const char* op, const T* a, const T* b, T* c, const Product& p) {
  constexpr int64_t kMax = std::numeric_limits<blasint>::max();
  if (p.m > kMax || p.n > kMax || p.k > kMax)
    fail(std::string(op) + ": sizes m=" + std::to_string(p.m) + ", k=" + std::to_string(p.k) + ", n=" +
         std::to_string(p.n) + " exceed the BLAS integer range, expected each <= " + std::to_string(kMax));
  const Operand pa = plan_operand(p.m, p.k, p.a_row, p.a_col);
  const Operand pb = plan_operand(p.k, p.n, p.b_row, p.b_col);
  std::vector<T> a_packed(pa.in_place ? 0 : p.m * p.k);
  std::vector<T> b_packed(pb.in_place ? 0 : p.k * p.n);
  for (int64_t i = 0; i < p.batch; ++i) {
    const T* ai = a + i * p.a_batch;
    const T* bi = b + i * p.b_batch;
    if (!pa.in_place) {
      pack(ai, p.m, p.k, p.a_row, p.a_col, a_packed.data());
      ai = a_packed.data();
    }
    if (!pb.in_place) {
      pack(bi, p.k, p.n, p.b_row, p.b_col, b_packed.data());
      bi = b_packed.data();
    }
    gemm(pa.trans, pb.trans, static_cast<blasint>(p.m), static_cast<blasint>(p.n), static_cast<blasint>(p.k),
         ai, pa.ld, bi, pb.ld, c + i * p.m * p.n);
  }
}

// i-k-j order: the inner loop runs along a row of b and of out.
template <class T>
void loop_product(const T* a, const T* b, T* c, const Product& p) {
  for (int64_t s = 0; s < p.batch; ++s) {
    const T* as = a + s * p.a_batch;
    const T* bs = b + s * p.b_batch;
    for (int64_t i = 0; i < p.m; ++i) {
      T* row = c + (s * p.m + i) * p.n;
      std::fill(row, row + p.n, T(0));
      for (int64_t q = 0; q < p.k; ++q) {
        const T aiq = as[i * p.a_row + q * p.a_col];
        for (int64_t j = 0; j < p.n; ++j)
          row[j] = wrap_add(row[j], wrap_mul(aiq, bs[q * p.b_row + j * p.b_col]));
      }
    }
  }
}

template <class T>
void matmul(sdk::KernelArgs& args, const char* op, bool batched) {
  const Product p = checked_product(args, op, batched, sdk::dtype_of<T>());
  const T* a = sdk::data_of<const T>(args.input(0));
  const T* b = sdk::data_of<const T>(args.input(1));
  T* c = sdk::data_of<T>(args.output(0));
  if (p.batch == 0 || p.m == 0 || p.n == 0) return;
  if (p.k == 0) {
    std::fill(c, c + p.batch * p.m * p.n, T(0));  // an empty sum
    return;
  }
  if constexpr (std::is_floating_point_v<T>)
    blas_product(op, a, b, c, p);
  else
    loop_product(a, b, c, p);
}

template <class T>
void mm_kernel(sdk::KernelArgs& args) {
  matmul<T>(args, "mm", false);
}

template <class T>
void bmm_kernel(sdk::KernelArgs& args) {
  matmul<T>(args, "bmm", true);
}

}  // namespace

void register_linalg_kernels(sdk::BackendBuilder& b) {
  b.kernel<&mm_kernel<float>>("mm", sdk::kFloat32);
  b.kernel<&mm_kernel<double>>("mm", sdk::kFloat64);
  b.kernel<&mm_kernel<int32_t>>("mm", sdk::kInt32);
  b.kernel<&mm_kernel<int64_t>>("mm", sdk::kInt64);
  b.kernel<&bmm_kernel<float>>("bmm", sdk::kFloat32);
  b.kernel<&bmm_kernel<double>>("bmm", sdk::kFloat64);
  b.kernel<&bmm_kernel<int32_t>>("bmm", sdk::kInt32);
  b.kernel<&bmm_kernel<int64_t>>("bmm", sdk::kInt64);
}

}  // namespace tessera::cpu
