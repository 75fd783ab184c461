// gather and scatter_add (sdk/KERNELS.md "Indexing"), with the CPU backend's rules and messages
// (sdk/cpp/indexing.hpp).
//
// gather: one thread per index element. scatter_add: one thread per fiber of the index (all its
// coordinates but `dim`), walking the fiber in order: the out elements a fiber adds into lie in
// the matching fiber of out, which no other thread touches, so no atomics are needed and each
// element's terms are added in the index's row-major order, as on the CPU (the same bits).
// An out-of-range index value is recorded in a device slot and reported after the kernel.
#include <cstdint>

#include "checks.hpp"
#include "kernels.hpp"
#include "launch.cuh"
#include "strided_index.cuh"
#include "tessera/sdk/cpp/indexing.hpp"

namespace tessera::cuda {
namespace {

// Where a kernel leaves the first bad index value it met: flag 0 until one is seen.
struct BadIndex {
  unsigned long long flag;
  long long value;
};

__device__ inline void record_bad(BadIndex* bad, int64_t value) {
  if (atomicCAS(&bad->flag, 0ull, 1ull) == 0ull) bad->value = static_cast<long long>(value);
}

// `v` seen with `shape`'s sizes and its step along `dim` zeroed: the offset of a position's row
// through dim, to which index value * the real stride is added.
StridedView rows_view(StridedView v, const StridedView& shape, int dim) {
  for (int d = 0; d < v.ndim; ++d) v.shape[d] = shape.shape[d];
  v.strides[dim] = 0;
  v.contiguous = false;
  return v;
}

// A slot on the device, zeroed; freed by the destructor; read() waits for this thread's stream.
class BadIndexSlot {
 public:
  explicit BadIndexSlot(const char* op) : op_(op) {
    TESSERA_CUDA_CHECK(
        cudaMallocAsync(reinterpret_cast<void**>(&slot_), sizeof(BadIndex), cudaStreamPerThread));
    TESSERA_CUDA_CHECK(cudaMemsetAsync(slot_, 0, sizeof(BadIndex), cudaStreamPerThread));
  }
  ~BadIndexSlot() { cudaFreeAsync(slot_, cudaStreamPerThread); }
  BadIndexSlot(const BadIndexSlot&) = delete;
  BadIndexSlot& operator=(const BadIndexSlot&) = delete;
  BadIndex* get() const { return slot_; }
  BadIndex read() const {
    BadIndex host{};
    TESSERA_CUDA_CHECK(
        cudaMemcpyAsync(&host, slot_, sizeof(BadIndex), cudaMemcpyDeviceToHost, cudaStreamPerThread));
    synchronize(op_);
    return host;
  }

 private:
  const char* op_;
  BadIndex* slot_ = nullptr;
};

template <class T>
__global__ void gather_device(int64_t n, StridedView a_rows, int64_t a_step, int64_t size, StridedView index,
                              StridedView out, BadIndex* bad) {
  for (int64_t i = grid_first(); i < n; i += grid_step()) {
    const int64_t k = reinterpret_cast<const int64_t*>(index.data)[offset_of(index, i)];
    if (k < 0 || k >= size) {
      record_bad(bad, k);
      continue;
    }
    reinterpret_cast<T*>(out.data)[offset_of(out, i)] =
        reinterpret_cast<const T*>(a_rows.data)[offset_of(a_rows, i) + k * a_step];
  }
}

template <class T>
void gather_kernel(sdk::KernelArgs& args) {
  expect_arity(args, "gather", 2, 1);
  const DLTensor& a = args.input(0);
  const DLTensor& index = args.input(1);
  const DLTensor& out = args.output(0);
  expect_dtype("gather", "input 0", a, sdk::dtype_of<T>());
  expect_dtype("gather", "output", out, sdk::dtype_of<T>());
  const int dim = sdk::checked_index_dim(args, "gather", a, index);
  expect_shape("gather", "output", out, index, "input 1 (index)");
  const StridedView index_view = make_view(index, "gather", "input 1 (index)");
  const int64_t n = numel_of(index_view);
  if (n == 0) return;
  const BadIndexSlot bad("gather");
  launch_elements("gather", &gather_device<T>, n,
                  rows_view(make_view(a, "gather", "input 0"), index_view, dim), a.strides[dim], a.shape[dim],
                  index_view, make_view(out, "gather", "output"), bad.get());
  if (const BadIndex seen = bad.read(); seen.flag != 0)
    sdk::fail_index_out_of_range("gather", seen.value, dim, a);
}

template <class T>
__global__ void copy_device(int64_t n, StridedView a, StridedView out) {
  for (int64_t i = grid_first(); i < n; i += grid_step())
    reinterpret_cast<T*>(out.data)[offset_of(out, i)] = reinterpret_cast<const T*>(a.data)[offset_of(a, i)];
}

// One thread per fiber: `fibers` is index's shape with dim `dim` of size 1.
template <class T>
__global__ void scatter_add_device(int64_t n, StridedView fibers, int dim, int64_t length, StridedView index,
                                   StridedView src, StridedView out_rows, int64_t out_step, int64_t size,
                                   BadIndex* bad) {
  for (int64_t f = grid_first(); f < n; f += grid_step()) {
    // The fiber's first position in row-major order over index's shape.
    int64_t rest = f, position = 0, scale = 1;
    for (int d = fibers.ndim - 1; d >= 0; --d) {
      const int64_t coordinate = rest % fibers.shape[d];
      rest /= fibers.shape[d];
      position += coordinate * scale;
      scale *= index.shape[d];
    }
    int64_t step = 1;
    for (int d = dim + 1; d < index.ndim; ++d) step *= index.shape[d];
    for (int64_t j = 0; j < length; ++j, position += step) {
      const int64_t k = reinterpret_cast<const int64_t*>(index.data)[offset_of(index, position)];
      if (k < 0 || k >= size) {
        record_bad(bad, k);
        continue;
      }
      reinterpret_cast<T*>(out_rows.data)[offset_of(out_rows, position) + k * out_step] +=
          reinterpret_cast<const T*>(src.data)[offset_of(src, position)];
    }
  }
}

template <class T>
void scatter_add_kernel(sdk::KernelArgs& args) {
  expect_arity(args, "scatter_add", 3, 1);
  const DLTensor& a = args.input(0);
  const DLTensor& index = args.input(1);
  const DLTensor& src = args.input(2);
  const DLTensor& out = args.output(0);
  expect_dtype("scatter_add", "input 0", a, sdk::dtype_of<T>());
  expect_dtype("scatter_add", "input 2 (src)", src, sdk::dtype_of<T>());
  expect_dtype("scatter_add", "output", out, sdk::dtype_of<T>());
  const int dim = sdk::checked_index_dim(args, "scatter_add", a, index);
  expect_shape("scatter_add", "input 2 (src)", src, index, "input 1 (index)");
  expect_shape("scatter_add", "output", out, a, "input 0");
  const StridedView out_view = make_view(out, "scatter_add", "output");
  launch_elements("scatter_add", &copy_device<T>, numel_of(out_view), make_view(a, "scatter_add", "input 0"),
                  out_view);
  const StridedView index_view = make_view(index, "scatter_add", "input 1 (index)");
  if (numel_of(index_view) == 0) return;
  StridedView fibers = index_view;
  fibers.shape[dim] = 1;
  const BadIndexSlot bad("scatter_add");
  launch_elements("scatter_add", &scatter_add_device<T>, numel_of(fibers), fibers, dim, index.shape[dim],
                  index_view, make_view(src, "scatter_add", "input 2 (src)"),
                  rows_view(out_view, index_view, dim), out.strides[dim], a.shape[dim], bad.get());
  if (const BadIndex seen = bad.read(); seen.flag != 0)
    sdk::fail_index_out_of_range("scatter_add", seen.value, dim, a);
}

// Both ops through one kernel template (sdk::add_indexing_kernels).
template <class Op, class T>
struct IndexingKernel {
  static void run(sdk::KernelArgs& args) {
    if constexpr (Op::gather)
      gather_kernel<T>(args);
    else
      scatter_add_kernel<T>(args);
  }
};

}  // namespace

void register_indexing_kernels(sdk::BackendBuilder& b) { sdk::add_indexing_kernels<IndexingKernel>(b); }

}  // namespace tessera::cuda
