// gather and scatter_add: reading and accumulating along one dim at positions an int64 index names.
// Both walk the index in row-major order, so scatter_add adds its terms in one fixed order (no
// atomics, no dependence on threads): the gradients of embedding, index_select and gather are
// reproducible bit for bit.
//
// index_select and embedding (and their gradients) index whole rows: the index holds one value
// along the last dim (stride 0 there) and `dim` is another. Such a call copies (gather) or adds
// (scatter_add) contiguous rows in one loop each, cloned per vector width; each output element
// still receives its terms in the row-major order of the index, so the bits are the same.
#include "tessera/sdk/cpp/indexing.hpp"

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "checks.hpp"
#include "kernels.hpp"
#include "tessera/sdk/cpp/strided_loop.hpp"
#include "vector_clones.hpp"
#include "views.hpp"

namespace tessera::cpu {
namespace {

// `t` seen with index's shape, its step along `dim` zeroed: the offset of an index position in it
// is that of the position's row through dim, to which index value * t.strides[dim] is added.
struct RowView {
  DLTensor view;
  std::array<int64_t, kMaxNdim> strides;
  RowView(const DLTensor& t, const DLTensor& index, int dim) : view(t), strides{} {
    for (int d = 0; d < t.ndim; ++d) strides[static_cast<size_t>(d)] = d == dim ? 0 : t.strides[d];
    view.shape = index.shape;
    view.strides = strides.data();
  }
};

// Whether the call moves whole rows: `dim` is not the last dim, the index holds one value along the
// last dim, and every tensor in `rows` has its last dim contiguous.
bool whole_rows(int dim, const DLTensor& index, std::initializer_list<const DLTensor*> rows) {
  const int last = index.ndim - 1;
  if (dim == last || index.shape[last] < 2 || index.strides[last] != 0) return false;
  for (const DLTensor* t : rows)
    if (t->strides[last] != 1) return false;
  return true;
}

template <class T>
TESSERA_CPU_VECTOR_CLONES void copy_row(T* y, const T* x, int64_t n) {
  for (int64_t j = 0; j < n; ++j) y[j] = x[j];
}

template <class T>
TESSERA_CPU_VECTOR_CLONES void add_row(T* y, const T* s, int64_t n) {
  for (int64_t j = 0; j < n; ++j) y[j] += s[j];
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
  const RowView rows(a, index, dim);
  const T* x = sdk::data_of<const T>(a);
  const int64_t* k = sdk::data_of<const int64_t>(index);
  T* y = sdk::data_of<T>(out);
  if (whole_rows(dim, index, {&a, &out})) {
    const int last = index.ndim - 1;
    const int64_t n = index.shape[last];
    const DLTensor index_rows = leading_dims(index, last), out_rows = leading_dims(out, last),
                   a_rows = leading_dims(rows.view, last);
    sdk::for_each_offset<3>(last, index.shape, {&index_rows, &out_rows, &a_rows},
                            [&](const std::array<int64_t, 3>& o) {
                              const int64_t value = k[o[0]];
                              if (value < 0 || value >= a.shape[dim])
                                sdk::fail_index_out_of_range("gather", value, dim, a);
                              copy_row(y + o[1], x + o[2] + value * a.strides[dim], n);
                            });
    return;
  }
  sdk::for_each_offset<3>(index.ndim, index.shape, {&index, &out, &rows.view},
                          [&](const std::array<int64_t, 3>& o) {
                            const int64_t value = k[o[0]];
                            if (value < 0 || value >= a.shape[dim])
                              sdk::fail_index_out_of_range("gather", value, dim, a);
                            y[o[1]] = x[o[2] + value * a.strides[dim]];
                          });
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
  const T* x = sdk::data_of<const T>(a);
  const T* s = sdk::data_of<const T>(src);
  const int64_t* k = sdk::data_of<const int64_t>(index);
  T* y = sdk::data_of<T>(out);
  sdk::for_each_offset<2>(a.ndim, a.shape, {&a, &out},
                          [&](const std::array<int64_t, 2>& o) { y[o[1]] = x[o[0]]; });
  const RowView rows(out, index, dim);
  if (whole_rows(dim, index, {&src, &out})) {
    const int last = index.ndim - 1;
    const int64_t n = index.shape[last];
    const DLTensor index_rows = leading_dims(index, last), src_rows = leading_dims(src, last),
                   out_rows = leading_dims(rows.view, last);
    sdk::for_each_offset<3>(last, index.shape, {&index_rows, &src_rows, &out_rows},
                            [&](const std::array<int64_t, 3>& o) {
                              const int64_t value = k[o[0]];
                              if (value < 0 || value >= a.shape[dim])
                                sdk::fail_index_out_of_range("scatter_add", value, dim, a);
                              add_row(y + o[2] + value * out.strides[dim], s + o[1], n);
                            });
    return;
  }
  sdk::for_each_offset<3>(index.ndim, index.shape, {&index, &src, &rows.view},
                          [&](const std::array<int64_t, 3>& o) {
                            const int64_t value = k[o[0]];
                            if (value < 0 || value >= a.shape[dim])
                              sdk::fail_index_out_of_range("scatter_add", value, dim, a);
                            y[o[2] + value * out.strides[dim]] += s[o[1]];
                          });
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

}  // namespace tessera::cpu
