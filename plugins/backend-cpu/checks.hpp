// Argument validation shared by all kernels. Each check throws sdk::Error(TESSERA_INVALID_ARGUMENT)
// with a message naming the op, the offending tensor and value, and what was expected, because the
// message is all a user sees of a failure deep inside a plugin.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "tessera/sdk/cpp/kernel_args.hpp"

namespace tessera::cpu {

std::string dtype_name(DLDataType dtype);
std::string shape_text(const DLTensor& t);

// The checks below run on every kernel call, so each is an inline test whose failure (building
// the message) is out of line.
[[noreturn]] void fail_arity(const sdk::KernelArgs& args, const char* op, size_t inputs, size_t outputs);
[[noreturn]] void fail_sane(const char* op, const char* role, size_t index, const DLTensor& t);
[[noreturn]] void fail_dtype(const char* op, const char* role, const DLTensor& t, DLDataType expected);
[[noreturn]] void fail_shape(const char* op, const char* role, const DLTensor& t, const DLTensor& like,
                             const char* like_role);

// for_each_offset keeps a fixed 64-entry odometer.
inline constexpr int kMaxNdim = 64;

// A sane ndim, shape and strides, and data unless the tensor is empty. `role` and `index` name the
// tensor ("input 1").
inline void expect_sane(const char* op, const char* role, size_t index, const DLTensor& t) {
  if (t.ndim < 0 || t.ndim > kMaxNdim || (t.ndim > 0 && (t.shape == nullptr || t.strides == nullptr)))
    fail_sane(op, role, index, t);
  bool empty = false;
  for (int d = 0; d < t.ndim; ++d) {
    if (t.shape[d] < 0) fail_sane(op, role, index, t);
    empty = empty || t.shape[d] == 0;
  }
  if (t.data == nullptr && !empty) fail_sane(op, role, index, t);
}

// Exactly `inputs` inputs and `outputs` outputs, each with a sane ndim, shape and strides.
inline void expect_arity(const sdk::KernelArgs& args, const char* op, size_t inputs, size_t outputs) {
  if (args.num_inputs() != inputs || args.num_outputs() != outputs) fail_arity(args, op, inputs, outputs);
  for (size_t i = 0; i < inputs; ++i) expect_sane(op, "input", i, args.input(i));
  for (size_t i = 0; i < outputs; ++i) expect_sane(op, "output", i, args.output(i));
}

// `role` names the tensor in messages, e.g. "input 1" or "output".
inline void expect_dtype(const char* op, const char* role, const DLTensor& t, DLDataType expected) {
  if (!sdk::same_dtype(t.dtype, expected)) fail_dtype(op, role, t, expected);
}
void expect_ndim(const char* op, const char* role, const DLTensor& t, int expected);
inline void expect_shape(const char* op, const char* role, const DLTensor& t, const DLTensor& like,
                         const char* like_role) {
  bool same = t.ndim == like.ndim;
  for (int d = 0; same && d < t.ndim; ++d) same = t.shape[d] == like.shape[d];
  if (!same) fail_shape(op, role, t, like, like_role);
}
// `why` says where `expected` comes from, e.g. "k, dim 1 of input 0".
void expect_dim(const char* op, const char* role, const DLTensor& t, int dim, int64_t expected,
                const char* why);
void expect_contiguous(const char* op, const char* role, const DLTensor& t);

// KernelArgs's attribute accessors, with the op named in their errors.
int64_t int_attr(const sdk::KernelArgs& args, const char* op, const char* name);
double float_attr(const sdk::KernelArgs& args, const char* op, const char* name);

[[noreturn]] void fail(const std::string& message);

}  // namespace tessera::cpu
