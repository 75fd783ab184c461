// Matrix products: mm ([m, k] x [k, n]) and bmm (the same per batch), checked exactly as the CPU
// backend checks them. f32/f64 go to cuBLAS (strided batched gemm; mm is a batch of one); i32/i64
// are an exact kernel of our own with wraparound accumulation in the element type.
//
// cuBLAS runs with CUBLAS_PEDANTIC_MATH: no TF32 and no other reduced-precision shortcut, so float32
// products keep float32 rounding and compare with the CPU backend's to within summation order.
#include <cublas_v2.h>

#include <climits>
#include <memory>
#include <cstdint>
#include <string>
#include <type_traits>

#include "checks.hpp"
#include "device_allocator.hpp"
#include "errors.cuh"
#include "kernels.hpp"
#include "launch.cuh"
#include "strided_index.cuh"
#include "tessera/sdk/cpp/matrix_product.hpp"

namespace tessera::cuda {
namespace {

using Product = sdk::MatrixProduct;

// ---- integer products ----------------------------------------------------------------------

// Wraparound through the unsigned type (signed overflow is undefined): the CPU backend's result.
template <class T>
__device__ T wrap_multiply_add(T acc, T x, T y) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(acc) + static_cast<U>(x) * static_cast<U>(y));
}

// One thread per output element: out[p, i, j] = sum over q of a[p, i, q] * b[p, q, j], in q order.
template <class T>
__global__ void integer_product_device(int64_t total, Product p, const T* a, const T* b, T* out) {
  for (int64_t e = grid_first(); e < total; e += grid_step()) {
    const int64_t j = e % p.n;
    const int64_t i = (e / p.n) % p.m;
    const int64_t batch = e / (p.n * p.m);
    const T* a_row = a + batch * p.a_batch + i * p.a_row;
    const T* b_col = b + batch * p.b_batch + j * p.b_col;
    T acc = 0;
    for (int64_t q = 0; q < p.k; ++q) acc = wrap_multiply_add(acc, a_row[q * p.a_col], b_col[q * p.b_row]);
    out[e] = acc;
  }
}

// ---- float products via cuBLAS --------------------------------------------------------------

// A cuBLAS handle is not safe to share between threads that use it at once, and each rank runs on
// its own thread: one handle per thread, bound to that thread's default stream.
class Handle {
 public:
  Handle() {
    check(cublasCreate(&handle_), "cublasCreate");
    check(cublasSetStream(handle_, cudaStreamPerThread), "cublasSetStream");
    check(cublasSetMathMode(handle_, CUBLAS_PEDANTIC_MATH), "cublasSetMathMode(CUBLAS_PEDANTIC_MATH)");
  }
  ~Handle() { (void)cublasDestroy(handle_); }  // at thread exit; nothing to report it to
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

cublasHandle_t this_thread_handle() {
  thread_local Handle handle;
  return handle.get();
}

// How one batch of [rows, cols] operands reaches gemm: in place, when one dim has unit stride, the
// other a stride cuBLAS accepts as leading dimension and the batch stride is not negative; else
// packed into a contiguous row-major copy. A size-1 dim is never stepped over, so its stride does
// not matter. Row-major in place is cuBLAS's column-major transpose, hence `op` below.
struct Operand {
  bool in_place;
  cublasOperation_t op;  // for the column-major product out^T = b^T a^T
  int ld;
  long long batch_stride;
};

Operand plan_operand(int64_t batch, int64_t rows, int64_t cols, int64_t batch_stride, int64_t row_stride,
                     int64_t col_stride) {
  const auto usable_ld = [](int64_t stride, int64_t minimum) {
    return stride >= (minimum > 1 ? minimum : 1) && stride <= INT_MAX;
  };
  const long long packed_batch = static_cast<long long>(rows) * cols;
  if (batch > 1 && batch_stride < 0)
    return {false, CUBLAS_OP_N, static_cast<int>(cols > 1 ? cols : 1), packed_batch};
  const long long stride = batch > 1 ? batch_stride : 0;
  if ((cols == 1 || col_stride == 1) && (rows == 1 || usable_ld(row_stride, cols)))
    return {true, CUBLAS_OP_N, static_cast<int>(rows == 1 ? (cols > 1 ? cols : 1) : row_stride), stride};
  if ((rows == 1 || row_stride == 1) && (cols == 1 || usable_ld(col_stride, rows)))
    return {true, CUBLAS_OP_T, static_cast<int>(cols == 1 ? (rows > 1 ? rows : 1) : col_stride), stride};
  return {false, CUBLAS_OP_N, static_cast<int>(cols > 1 ? cols : 1), packed_batch};
}

// Copies a strided [batch, rows, cols] operand into a contiguous row-major buffer.
template <class T>
__global__ void pack_device(int64_t total, const T* src, int64_t rows, int64_t cols, int64_t batch_stride,
                            int64_t row_stride, int64_t col_stride, T* dst) {
  for (int64_t e = grid_first(); e < total; e += grid_step()) {
    const int64_t j = e % cols;
    const int64_t i = (e / cols) % rows;
    const int64_t batch = e / (cols * rows);
    dst[e] = src[batch * batch_stride + i * row_stride + j * col_stride];
  }
}

// A temporary device buffer from the backend's own allocator, returned when the call ends.
class Scratch {
 public:
  Scratch(size_t bytes, const char* op) {
    tessera_error error{};
    error.struct_size = sizeof(error);
    if (device_alloc(nullptr, bytes, &ptr_, &error) != TESSERA_OK)
      throw sdk::Error(error.code, std::string(op) + ": packing an operand: " + error.message);
  }
  ~Scratch() { device_free(nullptr, ptr_); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  void* get() const { return ptr_; }

 private:
  void* ptr_ = nullptr;
};

cublasStatus_t gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                    const float* a, int lda, long long sa, const float* b, int ldb, long long sb, float* c,
                    int ldc, long long sc, int batch) {
  const float one = 1.0f, zero = 0.0f;
  return cublasSgemmStridedBatched(h, ta, tb, m, n, k, &one, a, lda, sa, b, ldb, sb, &zero, c, ldc, sc,
                                   batch);
}
cublasStatus_t gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                    const double* a, int lda, long long sa, const double* b, int ldb, long long sb, double* c,
                    int ldc, long long sc, int batch) {
  const double one = 1.0, zero = 0.0;
  return cublasDgemmStridedBatched(h, ta, tb, m, n, k, &one, a, lda, sa, b, ldb, sb, &zero, c, ldc, sc,
                                   batch);
}

template <class T>
void float_product(const char* op, const Product& p, const T* a, const T* b, T* out) {
  // cuBLAS takes int sizes and batch counts.
  if (p.batch > INT_MAX || p.m > INT_MAX || p.n > INT_MAX || p.k > INT_MAX)
    fail(std::string(op) + ": sizes batch=" + std::to_string(p.batch) + ", m=" + std::to_string(p.m) +
         ", k=" + std::to_string(p.k) + ", n=" + std::to_string(p.n) +
         " exceed cuBLAS's integer range, expected each <= " + std::to_string(INT_MAX));
  const int64_t total = p.batch * p.m * p.n;
  if (total == 0) return;
  if (p.k == 0) {  // an empty sum: zeros, without asking cuBLAS about a degenerate product
    check(cudaMemsetAsync(out, 0, static_cast<size_t>(total) * sizeof(T), cudaStreamPerThread), op);
    synchronize(op);
    return;
  }
  Operand pa = plan_operand(p.batch, p.m, p.k, p.a_batch, p.a_row, p.a_col);
  Operand pb = plan_operand(p.batch, p.k, p.n, p.b_batch, p.b_row, p.b_col);
  // Packed copies live until the product is done (synchronize runs before Scratch frees them).
  const auto packed = [&](const T* src, int64_t rows, int64_t cols, int64_t sb, int64_t sr, int64_t sc) {
    auto scratch = std::make_unique<Scratch>(static_cast<size_t>(p.batch * rows * cols) * sizeof(T), op);
    launch_elements(op, &pack_device<T>, p.batch * rows * cols, src, rows, cols, sb, sr, sc,
                    static_cast<T*>(scratch->get()));
    return scratch;
  };
  std::unique_ptr<Scratch> a_copy, b_copy;
  if (!pa.in_place) {
    a_copy = packed(a, p.m, p.k, p.a_batch, p.a_row, p.a_col);
    a = static_cast<const T*>(a_copy->get());
  }
  if (!pb.in_place) {
    b_copy = packed(b, p.k, p.n, p.b_batch, p.b_row, p.b_col);
    b = static_cast<const T*>(b_copy->get());
  }
  // Row-major out = a b is column-major out^T = b^T a^T, with out's leading dimension n.
  check(gemm(this_thread_handle(), pb.op, pa.op, static_cast<int>(p.n), static_cast<int>(p.m),
             static_cast<int>(p.k), b, pb.ld, pb.batch_stride, a, pa.ld, pa.batch_stride, out,
             static_cast<int>(p.n), static_cast<long long>(p.m) * p.n, static_cast<int>(p.batch)),
        op);
  synchronize(op);
}

template <class T, bool Batched>
void product_kernel(sdk::KernelArgs& args) {
  const char* op = Batched ? "bmm" : "mm";
  const Product p = sdk::checked_matrix_product(args, op, Batched, sdk::dtype_of<T>(), expect_arity);
  const T* a = sdk::data_of<const T>(args.input(0));
  const T* b = sdk::data_of<const T>(args.input(1));
  T* out = sdk::data_of<T>(args.output(0));
  if constexpr (std::is_floating_point_v<T>)
    float_product(op, p, a, b, out);
  else
    launch_elements(op, &integer_product_device<T>, p.batch * p.m * p.n, p, a, b, out);
}

}  // namespace

void register_linalg_kernels(sdk::BackendBuilder& b) {
  b.kernel<&product_kernel<float, false>>("mm", sdk::kFloat32);
  b.kernel<&product_kernel<double, false>>("mm", sdk::kFloat64);
  b.kernel<&product_kernel<int32_t, false>>("mm", sdk::kInt32);
  b.kernel<&product_kernel<int64_t, false>>("mm", sdk::kInt64);
  b.kernel<&product_kernel<float, true>>("bmm", sdk::kFloat32);
  b.kernel<&product_kernel<double, true>>("bmm", sdk::kFloat64);
  b.kernel<&product_kernel<int32_t, true>>("bmm", sdk::kInt32);
  b.kernel<&product_kernel<int64_t, true>>("bmm", sdk::kInt64);
}

}  // namespace tessera::cuda
