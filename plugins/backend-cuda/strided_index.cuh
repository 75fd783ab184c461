// A DLTensor view as a kernel argument: the core hands kernels transposed, sliced, broadcast
// (stride 0) and flipped (negative stride) views, and a DLTensor's shape and strides live in host
// memory that a kernel cannot read. StridedView copies them into a fixed-size struct passed BY VALUE
// (kernel parameters live in constant memory, so every thread reads them without a global load).
//
// Element `linear` of a tensor means its row-major index over the shape; offset_of turns it into an
// element offset through the strides. Element-wise kernels give every operand the output's shape
// (the core broadcasts by stride 0), so one linear index names the same element in each operand.
#pragma once

#include <cstdint>
#include <string>

#include <dlpack/dlpack.h>

#include "checks.hpp"  // kMaxDeviceNdim
#include "tessera/sdk/cpp/errors.hpp"
#include "tessera/sdk/cpp/strided_loop.hpp"

namespace tessera::cuda {

struct StridedView {
  char* data;  // DLTensor::data + byte_offset
  int32_t ndim;
  bool contiguous;  // row-major without gaps: offset_of(i) == i, no division needed
  int64_t shape[kMaxDeviceNdim];
  int64_t strides[kMaxDeviceNdim];  // in elements; 0 broadcasts, negative flips
};

// Builds the view of `t`; `op` and `role` ("input 1", "output") name the tensor in the error.
inline StridedView make_view(const DLTensor& t, const char* op, const char* role) {
  if (t.ndim < 0 || t.ndim > kMaxDeviceNdim)
    throw sdk::Error(TESSERA_UNIMPLEMENTED, std::string(op) + ": " + role + " has ndim " +
                                                std::to_string(t.ndim) + ", expected 0.." +
                                                std::to_string(kMaxDeviceNdim) +
                                                " (the most dims the CUDA backend passes to a kernel)");
  StridedView v{};
  v.data = static_cast<char*>(t.data) + t.byte_offset;
  v.ndim = t.ndim;
  v.contiguous = sdk::is_contiguous(t);
  for (int d = 0; d < t.ndim; ++d) {
    v.shape[d] = t.shape[d];
    v.strides[d] = t.strides[d];
  }
  return v;
}

// The element count of the view's shape (1 for a scalar, 0 if any dim is 0).
__host__ __device__ inline int64_t numel_of(const StridedView& v) {
  int64_t n = 1;
  for (int d = 0; d < v.ndim; ++d) n *= v.shape[d];
  return n;
}

// Element offset of row-major index `linear` of `v`'s shape: peel the coordinates off from the last
// dim (the fastest-varying) and sum coordinate * stride. Negative strides need no special case:
// data already points at element [0, ..., 0] and the sum goes below it.
__host__ __device__ inline int64_t offset_of(const StridedView& v, int64_t linear) {
  if (v.contiguous) return linear;
  int64_t offset = 0;
  for (int d = v.ndim - 1; d >= 0; --d) {
    const int64_t size = v.shape[d];
    const int64_t coordinate = linear % size;
    linear /= size;
    offset += coordinate * v.strides[d];
  }
  return offset;
}

// Element offset in `v` of row-major index `linear` over `index_shape` (the output's view), for
// operands whose own shape may differ only where they broadcast: dims are right-aligned, and a
// dim `v` lacks or holds with size 1 contributes nothing (its coordinate is fixed at 0). Where the
// shapes are equal, the one-view offset_of is the same and faster (it skips contiguous views).
__host__ __device__ inline int64_t offset_of(const StridedView& v, const StridedView& index_shape,
                                             int64_t linear) {
  int64_t offset = 0;
  const int32_t lead = index_shape.ndim - v.ndim;
  for (int d = index_shape.ndim - 1; d >= 0; --d) {
    const int64_t size = index_shape.shape[d];
    const int64_t coordinate = linear % size;
    linear /= size;
    const int vd = d - lead;
    if (vd >= 0 && v.shape[vd] != 1) offset += coordinate * v.strides[vd];
  }
  return offset;
}

// The element at row-major index `linear` of `v`.
template <class T>
__host__ __device__ inline T& element(const StridedView& v, int64_t linear) {
  return reinterpret_cast<T*>(v.data)[offset_of(v, linear)];
}

}  // namespace tessera::cuda
