// Header-only iteration over the elements of N same-shaped strided tensors.
//
// The core hands kernels views: transposed, sliced, broadcast (stride 0). A kernel written with
// for_each_offset sees one callback per element with that element's offset in each tensor, so it
// stays a plain loop however the data is laid out; for_each_row hands it whole rows instead.
#pragma once

#include <array>
#include <cstdint>

#include <dlpack/dlpack.h>

namespace tessera::sdk {

// Row-major with no gaps; an empty tensor counts as contiguous whatever its strides say.
inline bool is_contiguous(const DLTensor& t) {
  for (int d = 0; d < t.ndim; ++d)
    if (t.shape[d] == 0) return true;
  int64_t expected = 1;
  for (int d = t.ndim - 1; d >= 0; --d) {
    if (t.shape[d] != 1 && t.strides[d] != expected) return false;
    expected *= t.shape[d];
  }
  return true;
}

// Calls f(offsets, steps, length) once per row of `shape`'s last dim, in row-major order: element j
// of the row sits at offsets[k] + j * steps[k] in tensor k. A kernel whose rows have unit steps
// (or a broadcast operand's step 0) runs a plain loop over each. A 0-d shape is one row of length
// 1. All tensors must have the given shape.
template <size_t N, class F>
void for_each_row(int ndim, const int64_t* shape, const std::array<const DLTensor*, N>& tensors, F&& f) {
  int64_t total = 1;
  for (int d = 0; d < ndim; ++d) total *= shape[d];
  if (total == 0) return;
  std::array<int64_t, N> base{};
  std::array<int64_t, N> steps{};
  if (ndim == 0) {
    f(base, steps, int64_t{1});
    return;
  }
  // Odometer over all dims but the last.
  const int last = ndim - 1;
  for (size_t k = 0; k < N; ++k) steps[k] = tensors[k]->strides[last];
  int64_t index[64] = {0};
  const int64_t rows = total / shape[last];
  for (int64_t row = 0; row < rows; ++row) {
    f(base, steps, shape[last]);
    for (int d = last - 1; d >= 0; --d) {
      ++index[d];
      for (size_t k = 0; k < N; ++k) base[k] += tensors[k]->strides[d];
      if (index[d] < shape[d]) break;
      for (size_t k = 0; k < N; ++k) base[k] -= tensors[k]->strides[d] * shape[d];
      index[d] = 0;
    }
  }
}

// Calls f(offsets) for every index of `shape` (ndim dims), in row-major order, where offsets[k] is
// the element offset of that index in tensor k. All tensors must have the given shape.
template <size_t N, class F>
void for_each_offset(int ndim, const int64_t* shape, const std::array<const DLTensor*, N>& tensors, F&& f) {
  bool all_contiguous = true;
  for (const DLTensor* t : tensors) all_contiguous = all_contiguous && is_contiguous(*t);
  if (all_contiguous) {
    int64_t total = 1;
    for (int d = 0; d < ndim; ++d) total *= shape[d];
    std::array<int64_t, N> offsets{};
    for (int64_t i = 0; i < total; ++i) {
      offsets.fill(i);
      f(offsets);
    }
    return;
  }
  for_each_row(ndim, shape, tensors,
               [&](const std::array<int64_t, N>& base, const std::array<int64_t, N>& steps, int64_t length) {
                 std::array<int64_t, N> offsets = base;
                 for (int64_t j = 0; j < length; ++j) {
                   f(offsets);
                   for (size_t k = 0; k < N; ++k) offsets[k] += steps[k];
                 }
               });
}

}  // namespace tessera::sdk
