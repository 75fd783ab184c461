// The single path from the core to a backend kernel.
//
// Operands are passed as views: a tensor's own sizes and strides, or others over the same storage
// (a broadcast view with stride-0 dims, a reshaped reduction input). Nothing here allocates: the
// DLTensors and attribute tables live on the stack for the duration of the call.
#pragma once

#include <initializer_list>
#include <span>
#include <string_view>

#include "tensor/tensor_impl.hpp"

namespace tessera::dispatch {

struct Operand {
  const TensorImpl* tensor;
  const int64_t* sizes;
  const int64_t* strides;
  int32_t ndim;
  int64_t offset = 0;  // elements past the tensor's own offset where this view starts
};

inline Operand operand(const TensorImpl& t) {
  return {&t, t.sizes().data(), t.strides().data(), static_cast<int32_t>(t.dim())};
}
inline Operand operand(const TensorImpl& t, std::span<const int64_t> sizes, std::span<const int64_t> strides) {
  return {&t, sizes.data(), strides.data(), static_cast<int32_t>(sizes.size())};
}
// `count` contiguous elements of 1-d `t` from element `offset` (the caller has checked the range;
// `count` and `one` (= 1) must outlive the call). What the executor's chunks are, without a view.
inline Operand operand_range(const TensorImpl& t, int64_t offset, const int64_t& count, const int64_t& one) {
  return {&t, &count, &one, 1, offset};
}

// to[to_offset, +count) = from[from_offset, +count) of 1-d `to` and `from`, one dtype, ranges not
// overlapping. Host memory is a memcpy: a copy computes nothing, and a schedule of small chunks
// must not pay a kernel dispatch per step. Elsewhere the backend's copy kernel.
void copy_range(const TensorImpl& from, int64_t from_offset, const TensorImpl& to, int64_t to_offset, int64_t count);

struct Attr {
  static Attr integer(const char* name, int64_t value) { return {name, TESSERA_ATTR_INT, value, 0.0, {}}; }
  static Attr real(const char* name, double value) { return {name, TESSERA_ATTR_FLOAT, 0, value, {}}; }
  static Attr list(const char* name, std::span<const int64_t> values) {
    return {name, TESSERA_ATTR_INTS, 0, 0.0, values};
  }
  const char* name;
  int32_t kind;
  int64_t int_value;
  double float_value;
  std::span<const int64_t> ints;
};

// Runs kernel (op, key dtype) of the backend the operands live on. Throws Error when operands are on
// different backends, when the backend has no such kernel, or when the kernel reports a failure.
void call_kernel(std::string_view op, DType key, std::initializer_list<Operand> inputs,
                 std::initializer_list<Operand> outputs, std::initializer_list<Attr> attrs = {});
// The same for a call whose operands are counted at run time (a kernel with optional inputs).
void call_kernel(std::string_view op, DType key, std::span<const Operand> inputs, std::span<const Operand> outputs,
                 std::span<const Attr> attrs);

}  // namespace tessera::dispatch
