// Functions that make new tensors. Inside an enabled LocalMode they make local tensors over the
// mode's ranks; a shape with per-rank sizes makes a local tensor too.
#pragma once

#include <initializer_list>
#include <type_traits>
#include <vector>

#include "tessera/errors.hpp"
#include "tessera/generator.hpp"
#include "tessera/scalar.hpp"
#include "tessera/tensor.hpp"

namespace tessera {

Tensor empty(const SymShape& shape, TensorOptions options = {});
Tensor zeros(const SymShape& shape, TensorOptions options = {});
Tensor ones(const SymShape& shape, TensorOptions options = {});
// dtype from options, else from the value: bool -> bool, integer -> int64, floating -> float32.
Tensor full(const SymShape& shape, Scalar value, TensorOptions options = {});
// dtype from options, else int64 when start, end and step are all integers, else float32.
Tensor arange(Scalar end, TensorOptions options = {});
Tensor arange(Scalar start, Scalar end, Scalar step = 1, TensorOptions options = {});
Tensor eye(int64_t n, TensorOptions options = {});
Tensor eye(int64_t n, int64_t m, TensorOptions options = {});
// Uniform in [0, 1) and standard normal; float dtypes only. Without a generator: the default one.
Tensor rand(const SymShape& shape, TensorOptions options = {});
Tensor rand(const SymShape& shape, Generator& generator, TensorOptions options = {});
Tensor randn(const SymShape& shape, TensorOptions options = {});
Tensor randn(const SymShape& shape, Generator& generator, TensorOptions options = {});

// Same shape (and dtype/backend unless the options say otherwise) as `like`.
Tensor empty_like(const Tensor& like, TensorOptions options = {});
Tensor zeros_like(const Tensor& like, TensorOptions options = {});
Tensor ones_like(const Tensor& like, TensorOptions options = {});
Tensor full_like(const Tensor& like, Scalar value, TensorOptions options = {});

// A tensor from flat values and a shape; dtype from options, else from T (int -> int64, as Python).
template <class T>
Tensor from_values(const std::vector<T>& values, const Shape& shape, TensorOptions options = {});

// tensor({1.f, 2.f}), tensor({{1, 2}, {3, 4}}), tensor({{{true}}}): nested braces up to 3 levels;
// ragged nesting is an error naming the offending row.
template <class T>
Tensor tensor(std::initializer_list<T> values, TensorOptions options = {}) {
  return from_values(std::vector<T>(values), {static_cast<int64_t>(values.size())}, options);
}
template <class T>
Tensor tensor(std::initializer_list<std::initializer_list<T>> rows, TensorOptions options = {});
template <class T>
Tensor tensor(std::initializer_list<std::initializer_list<std::initializer_list<T>>> planes,
              TensorOptions options = {});
// A 0-d tensor.
Tensor scalar_tensor(Scalar value, TensorOptions options = {});
// tensor(2.f): a 0-d tensor, as torch.tensor(2.); dtype from T as for from_values (whose value
// types are these).
template <class T>
requires(std::is_same_v<T, bool> || std::is_same_v<T, int> || std::is_same_v<T, long> ||
         std::is_same_v<T, long long> || std::is_same_v<T, float> || std::is_same_v<T, double>) Tensor
    tensor(T value, TensorOptions options = {}) {
  return from_values(std::vector<T>{value}, Shape{}, options);
}

namespace detail {
[[noreturn]] void throw_ragged(size_t row, size_t got, size_t expected);
template <class T, class Row>
void append_row(std::vector<T>& flat, const Row& row, size_t index, size_t expected) {
  if (row.size() != expected) throw_ragged(index, row.size(), expected);
  flat.insert(flat.end(), row.begin(), row.end());
}
}  // namespace detail

template <class T>
Tensor tensor(std::initializer_list<std::initializer_list<T>> rows, TensorOptions options) {
  const size_t cols = rows.size() == 0 ? 0 : rows.begin()->size();
  std::vector<T> flat;
  size_t index = 0;
  for (const auto& row : rows) detail::append_row(flat, row, index++, cols);
  return from_values(flat, {static_cast<int64_t>(rows.size()), static_cast<int64_t>(cols)}, options);
}

template <class T>
Tensor tensor(std::initializer_list<std::initializer_list<std::initializer_list<T>>> planes,
              TensorOptions options) {
  const size_t rows = planes.size() == 0 ? 0 : planes.begin()->size();
  const size_t cols = rows == 0 ? 0 : planes.begin()->begin()->size();
  std::vector<T> flat;
  size_t index = 0;
  for (const auto& plane : planes) {
    if (plane.size() != rows) detail::throw_ragged(index, plane.size(), rows);
    for (const auto& row : plane) detail::append_row(flat, row, index++, cols);
  }
  return from_values(
      flat, {static_cast<int64_t>(planes.size()), static_cast<int64_t>(rows), static_cast<int64_t>(cols)},
      options);
}

}  // namespace tessera
