// Kernel operands (dispatch/kernel_call.hpp) made of tensors: the tensor layer's side of the one
// path from the core to a backend kernel. dispatch, below this layer, reaches a TensorImpl's bytes
// only through the BufferAccess table defined here.
#pragma once

#include <span>

#include "dispatch/kernel_call.hpp"
#include "tensor/tensor_impl.hpp"

namespace tessera::dispatch {

// How kernel calls reach a TensorImpl's bytes.
extern const BufferAccess kTensorAccess;

inline Operand operand(const TensorImpl& t) {
  return {&t,         &kTensorAccess,   &t.backend(),       t.dtype(),
          t.offset(), t.sizes().data(), t.strides().data(), static_cast<int32_t>(t.dim())};
}
// Another view of `t`'s bytes, starting `offset` elements past `t`'s own offset.
inline Operand operand(const TensorImpl& t, std::span<const int64_t> sizes, std::span<const int64_t> strides,
                       int64_t offset = 0) {
  return {&t,         &kTensorAccess, &t.backend(),   t.dtype(),
          t.offset(), sizes.data(),   strides.data(), static_cast<int32_t>(sizes.size()),
          offset};
}
// `count` contiguous elements of 1-d `t` from element `offset` (the caller has checked the range;
// `count` and `one` (= 1) must outlive the call). What the executor's chunks are, without a view.
inline Operand operand_range(const TensorImpl& t, int64_t offset, const int64_t& count, const int64_t& one) {
  return {&t, &kTensorAccess, &t.backend(), t.dtype(), t.offset(), &count, &one, 1, offset};
}

// to[to_offset, +count) = from[from_offset, +count) of 1-d `to` and `from`, one dtype, ranges not
// overlapping. Host memory is a memcpy: a copy computes nothing, and a schedule of small chunks
// must not pay a kernel dispatch per step. Elsewhere the backend's copy kernel.
void copy_range(const TensorImpl& from, int64_t from_offset, const TensorImpl& to, int64_t to_offset,
                int64_t count);

}  // namespace tessera::dispatch
