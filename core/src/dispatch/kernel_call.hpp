// The single path from the core to a backend kernel.
//
// Operands are passed as views: a tensor's own sizes and strides, or others over the same storage
// (a broadcast view with stride-0 dims, a reshaped reduction input). Nothing here allocates: the
// DLTensors and attribute tables live on the stack for the duration of the call. The tensor layer
// makes operands of its tensors (tensor/kernel_operand.hpp: operand, operand_range, copy_range).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string_view>

#include "dispatch/backend.hpp"
#include "tessera/dtype.hpp"

namespace tessera::dispatch {

struct Operand;

// How a kernel call reaches the bytes of a kind of buffer. The layer that owns the buffers (the
// tensor layer, for TensorImpl: tensor/kernel_operand.hpp) provides one table for its kind, so that
// this layer, below it, calls kernels on them without naming their type.
struct BufferAccess {
  // Called before a kernel writes through the buffer: bytes shared with another buffer are copied
  // first (copy-on-write).
  void (*prepare_write)(const void* buffer);
  // The address of the buffer's bytes (its offset not applied); null when they have none (a
  // shapes-only backend). Throws Error when the bytes were released.
  void* (*data)(const void* buffer);
  // A fresh contiguous buffer of `sizes` and `dtype` on `buffer`'s backend (the temporaries of a
  // widened call), alive while the handle is; `made` becomes the whole of it.
  std::shared_ptr<const void> (*fresh)(const void* buffer, std::span<const int64_t> sizes, DType dtype,
                                       Operand& made);
};

// One operand of a kernel call: a view (sizes and strides, in elements) of a buffer's bytes.
struct Operand {
  const void* buffer;          // the owning layer's object (a TensorImpl)
  const BufferAccess* access;  // how to reach its bytes
  const Backend* backend;      // where the bytes live
  DType dtype;
  int64_t buffer_offset;  // where the buffer's own view starts, in elements
  const int64_t* sizes;
  const int64_t* strides;
  int32_t ndim;
  int64_t offset = 0;  // elements past the buffer's own offset where this view starts
};

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
void call_kernel(std::string_view op, DType key, std::span<const Operand> inputs,
                 std::span<const Operand> outputs, std::span<const Attr> attrs);

}  // namespace tessera::dispatch
