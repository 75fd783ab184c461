// embedding (a gather of weight rows) and one_hot. Both read the index values once to report an
// out-of-range one by value, with the size it had to be below; a shapes-only backend holds no
// values and is not checked.
#include <fmt/format.h>

#include "dispatch/backend.hpp"
#include "tensor/index_check.hpp"
#include "tensor/internal.hpp"
#include "tessera/detail/spmd.hpp"
#include "tessera/errors.hpp"
#include "tessera/ops.hpp"

namespace tessera {
namespace {

using detail::impl_of;

void require_index_dtype(const char* op, const Tensor& indices) {
  if (!indices.defined()) impl_of(indices, op);
  if (indices.dtype() != kInt64 && indices.dtype() != kInt32)
    throw Error(
        fmt::format("{}: indices have dtype {}, expected int64 or int32", op, dtype_name(indices.dtype())));
}

bool holds_values(const Tensor& dense) {
  return dense.numel() > 0 && !impl_of(dense, "index check").backend().shapes_only();
}

// The smallest and largest index of a dense tensor that holds values.
std::pair<int64_t, int64_t> index_range(const Tensor& dense) {
  return {min(dense).item<int64_t>(), max(dense).item<int64_t>()};
}

}  // namespace

namespace detail {
void check_embedding_indices(const Tensor& indices, int64_t size, const char* op) {
  detail::spmd(
      op,
      [&](const Tensor& i) {
        if (!holds_values(i)) return;
        const auto [lo, hi] = index_range(i);
        if (lo < 0 || hi >= size)
          throw Error(fmt::format(
              "{}: index {} is out of range for a vocabulary of {} rows; expected indices in 0..{}", op,
              lo < 0 ? lo : hi, size, size - 1));
      },
      indices);
}
}  // namespace detail

Tensor embedding(const Tensor& indices, const Tensor& weight) {
  require_index_dtype("embedding", indices);
  if (!weight.defined()) impl_of(weight, "embedding");
  if (weight.dim() != 2)
    throw Error(
        fmt::format("embedding: weight has shape {}, expected 2 dims (vocabulary size, embedding dim)",
                    weight.shape().to_string()));
  const Tensor flat = indices.to(kInt64).reshape({-1});
  detail::spmd(
      "embedding",
      [](const Tensor& i, const Tensor& w) {
        if (!holds_values(i)) return;
        const auto [lo, hi] = index_range(i);
        const int64_t vocabulary = w.size(0);
        if (lo < 0 || hi >= vocabulary)
          throw Error(fmt::format(
              "embedding: index {} is out of range for a vocabulary of {} rows (weight shape {}); "
              "expected indices in 0..{}",
              lo < 0 ? lo : hi, vocabulary, shape_text(w.sizes()), vocabulary - 1));
      },
      flat, weight);
  const SymShape index_shape = indices.shape();
  std::vector<SymInt> out(index_shape.begin(), index_shape.end());
  out.push_back(weight.sym_size(1));
  return index_select(weight, 0, flat).reshape(SymShape(out));
}

Tensor one_hot(const Tensor& indices, int64_t num_classes) {
  require_index_dtype("one_hot", indices);
  if (num_classes < -1)
    throw Error(
        fmt::format("one_hot: num_classes is {}, expected -1 (one more than the largest index) or at least 0",
                    num_classes));
  return detail::spmd(
      "one_hot",
      [num_classes](const Tensor& i) {
        const Tensor k = i.to(kInt64);
        int64_t classes = num_classes;
        if (holds_values(k)) {
          const auto [lo, hi] = index_range(k);
          if (lo < 0)
            throw Error(fmt::format("one_hot: index {} is negative, expected indices of at least 0", lo));
          if (classes == -1) classes = hi + 1;
          if (hi >= classes)
            throw Error(
                fmt::format("one_hot: index {} is not below num_classes {}, expected indices in 0..{}", hi,
                            classes, classes - 1));
        } else if (classes == -1) {
          throw Error(fmt::format(
              "one_hot: num_classes is -1 but indices (shape {}) hold no values to infer it from; "
              "pass num_classes",
              shape_text(k.sizes())));
        }
        Shape shape = k.sizes();
        shape.push_back(classes);
        Tensor zeros = detail::empty_like_on(impl_of(k, "one_hot"), shape, kInt64);
        detail::fill_dense(*zeros.impl(), Scalar(0));
        if (classes == 0 || k.numel() == 0) return zeros;
        Shape column = k.sizes();
        column.push_back(1);
        Tensor ones = detail::empty_like_on(impl_of(k, "one_hot"), column, kInt64);
        detail::fill_dense(*ones.impl(), Scalar(1));
        return scatter_add(zeros, -1, k.reshape(column), ones);
      },
      indices);
}

}  // namespace tessera
