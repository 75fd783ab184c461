// Matrix products: mm ([m, k] x [k, n]) and bmm (the same per batch). f32/f64 are chains of fused
// multiply-adds (fma_product.hpp: the same bits on every CPU); i32/i64 are a plain i-k-j loop with
// wraparound accumulation in the element type.
//
// Same bits for every thread count (docs/design.md): a large product is split into panels of the output
// whose layout depends only on (m, n, k), and an element's chain never depends on the panel it is
// in. The configured thread count only decides how many threads share out the panels.
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "checks.hpp"
#include "fma_product.hpp"
#include "kernels.hpp"
#include "parallel_tasks.hpp"
#include "tessera/sdk/cpp/matrix_product.hpp"
#include "tessera/sdk/cpp/host_device.hpp"

namespace tessera::cpu {
namespace {

// The host's tessera_backend set_num_threads value: 0 for the default (the CPUs this process may
// run on), 1 while it runs ranks in parallel.
std::atomic<int32_t> configured_threads{0};

int available_cpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

}  // namespace

int product_threads() {
  const int32_t configured = configured_threads.load(std::memory_order_relaxed);
  if (configured > 0) return configured;
  static const int default_threads = available_cpus();
  return default_threads;
}

namespace {

using Product = sdk::MatrixProduct;

// Below this many multiply-adds a panel is not worth a thread of its own: a product this small stays
// one panel, and panels grow until they reach it.
constexpr int64_t kMinPanelWork = int64_t{1} << 21;
// The starting edge of a panel: a compromise fixed once for every machine, since the grid may not
// follow the thread count. Smaller panels share out better but cost more single-threaded (256: a
// 2048^3 product took 1.37x cblas_sgemm's time on one thread; 512: 1.08x); a 1024x1024 product
// still has 4 panels to share out.
constexpr int64_t kPanelEdge = 512;

// m * n * k, or the int64 maximum when that overflows (only compared against thresholds).
int64_t work_of(int64_t m, int64_t n, int64_t k) {
  int64_t mn = 0, mnk = 0;
  if (__builtin_mul_overflow(m, n, &mn) || __builtin_mul_overflow(mn, k, &mnk))
    return std::numeric_limits<int64_t>::max();
  return mnk;
}

// How one output matrix is cut into panels of `rows` x `cols` (the last ones in each direction
// smaller). A function of the shape alone: never of the thread count.
struct PanelGrid {
  int64_t rows, cols;
  int64_t row_panels, col_panels;
  int64_t count() const { return row_panels * col_panels; }
};

PanelGrid plan_panels(int64_t m, int64_t n, int64_t k) {
  int64_t rows = m, cols = n;
  if (work_of(m, n, k) >= 2 * kMinPanelWork) {
    rows = std::min(m, kPanelEdge);
    cols = std::min(n, kPanelEdge);
    while (work_of(rows, cols, k) < kMinPanelWork && (rows < m || cols < n)) {
      if (rows < m)
        rows = std::min(m, rows * 2);
      else
        cols = std::min(n, cols * 2);
    }
  }
  return {rows, cols, (m + rows - 1) / rows, (n + cols - 1) / cols};
}

// One panel of batch item `s`: output rows [i0, i0 + rows) and cols [j0, j0 + cols). a is read
// in place whatever its strides; b only when its rows have unit stride (the tiles load a row of b
// as one vector), else the panel's columns of b are copied into a row-major block first.
template <class T>
void panel_product(const T* a, const T* b, T* c, const Product& p, int64_t s, int64_t i0, int64_t rows,
                   int64_t j0, int64_t cols) {
  const T* bs = b + s * p.b_batch + j0 * p.b_col;
  int64_t b_row = p.b_row;
  std::vector<T> b_packed;
  if (p.b_col != 1 && cols > 1) {
    b_packed.resize(static_cast<size_t>(p.k * cols));
    for (int64_t q = 0; q < p.k; ++q)
      for (int64_t j = 0; j < cols; ++j)
        b_packed[static_cast<size_t>(q * cols + j)] = bs[q * p.b_row + j * p.b_col];
    bs = b_packed.data();
    b_row = cols;
  }
  fma_product(FmaProduct<T>{a + s * p.a_batch + i0 * p.a_row, p.a_row, p.a_col, bs, b_row,
                            c + (s * p.m + i0) * p.n + j0, p.n, rows, cols, p.k});
}

// Requires m, n, k >= 1.
template <class T>
void fma_panels(const T* a, const T* b, T* c, const Product& p) {
  const PanelGrid grid = plan_panels(p.m, p.n, p.k);
  // Tasks are (batch item, panel); how many threads share them depends on the work, not the bits.
  const int64_t tasks = p.batch * grid.count();
  const int64_t work = work_of(p.batch, p.m, work_of(p.n, p.k, 1));
  const int threads =
      static_cast<int>(std::min<int64_t>(product_threads(), std::max<int64_t>(1, work / kMinPanelWork)));
  run_tasks(tasks, threads, [&](int64_t task) {
    const int64_t s = task / grid.count();
    const int64_t panel = task % grid.count();
    const int64_t i0 = panel / grid.col_panels * grid.rows;
    const int64_t j0 = panel % grid.col_panels * grid.cols;
    panel_product(a, b, c, p, s, i0, std::min(grid.rows, p.m - i0), j0, std::min(grid.cols, p.n - j0));
  });
}

// A batch whose items share one right operand (batch stride 0) and whose left items are stacked
// rows (item s's row i is row s m + i) is one product of batch x m rows: the output is contiguous,
// so its rows stack the same way, and an element's chain does not depend on the rows it is computed
// with (fma_product.hpp). The rows then share each pass over b, which the items apart would stream
// again each (the core stacks ranks' products over one shared weight this way: tensor/linalg.cpp).
Product as_one_product(const Product& p) {
  int64_t stacked_stride = 0;  // what a_batch is when the items are stacked rows
  if (p.batch <= 1 || p.b_batch != 0 || __builtin_mul_overflow(p.m, p.a_row, &stacked_stride) ||
      p.a_batch != stacked_stride)
    return p;
  return Product{1, p.batch * p.m, p.k, p.n, 0, p.a_row, p.a_col, 0, p.b_row, p.b_col};
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
        for (int64_t j = 0; j < p.n; ++j) {
          const T term = sdk::hd::arithmetic(aiq, bs[q * p.b_row + j * p.b_col], '*');
          row[j] = sdk::hd::arithmetic(row[j], term, '+');
        }
      }
    }
  }
}

template <class T>
void matmul(sdk::KernelArgs& args, const char* op, bool batched) {
  const Product p = sdk::checked_matrix_product(args, op, batched, sdk::dtype_of<T>(), expect_arity);
  const T* a = sdk::data_of<const T>(args.input(0));
  const T* b = sdk::data_of<const T>(args.input(1));
  T* c = sdk::data_of<T>(args.output(0));
  if (p.batch == 0 || p.m == 0 || p.n == 0) return;
  if (p.k == 0) {
    std::fill(c, c + p.batch * p.m * p.n, T(0));  // an empty sum
    return;
  }
  if constexpr (std::is_floating_point_v<T>)
    fma_panels(a, b, c, as_one_product(p));
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

void set_product_threads(int32_t num_threads) { configured_threads.store(std::max(0, num_threads)); }

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
