// Header-only argument checks for backend kernels. Every check throws
// sdk::Error(TESSERA_INVALID_ARGUMENT) with a message naming the op, the tensor, the offending value
// and what was expected, because the message is all a user sees of a failure deep inside a plugin.
// Backends that share these checks give the same errors for the same bad call, which
// tools/conformance compares.
//
// The checks run on every kernel call, so each is an inline test; building a failure's message is
// kept out of line (cold, never inlined) so that the passing path stays a few compares.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "tessera/sdk/cpp/errors.hpp"
#include "tessera/sdk/cpp/kernel_args.hpp"
#include "tessera/sdk/cpp/strided_loop.hpp"

namespace tessera::sdk {
// `using namespace tessera::sdk::checks;` brings these into a backend's own namespace.
inline namespace checks {

// The most dims a backend's kernels accept, and why (appended to the error, may be empty): the CPU
// backend's strided loops keep a fixed odometer, the CUDA backend's views a fixed array.
struct NdimLimit {
  int most;
  const char* reason;
};

[[noreturn, gnu::cold, gnu::noinline]] inline void fail_invalid(const std::string& message) {
  throw Error(TESSERA_INVALID_ARGUMENT, message);
}

inline std::string dtype_name(DLDataType dtype) {
  if (same_dtype(dtype, kFloat32)) return "float32";
  if (same_dtype(dtype, kFloat64)) return "float64";
  if (same_dtype(dtype, kInt32)) return "int32";
  if (same_dtype(dtype, kInt64)) return "int64";
  if (same_dtype(dtype, kBool)) return "bool";
  if (same_dtype(dtype, kBFloat16)) return "bfloat16";
  if (same_dtype(dtype, kFloat16)) return "float16";
  if (same_dtype(dtype, kInt8)) return "int8";
  if (same_dtype(dtype, kUInt8)) return "uint8";
  return "{code " + std::to_string(dtype.code) + ", bits " + std::to_string(dtype.bits) + ", lanes " +
         std::to_string(dtype.lanes) + "}";
}

inline std::string shape_text(const DLTensor& t) {
  std::string text = "[";
  for (int d = 0; d < t.ndim; ++d) text += (d == 0 ? "" : ", ") + std::to_string(t.shape[d]);
  return text + "]";
}

namespace check_failures {

// expect_sane's failure: names the first problem found.
[[noreturn, gnu::cold, gnu::noinline]] inline void sane(const char* op, const char* role, size_t index,
                                                        const DLTensor& t, NdimLimit limit) {
  const std::string who = std::string(op) + ": " + role + " " + std::to_string(index);
  if (t.ndim < 0 || t.ndim > limit.most)
    fail_invalid(who + " has ndim " + std::to_string(t.ndim) + ", expected 0.." + std::to_string(limit.most) +
                 limit.reason);
  if (t.ndim > 0 && (t.shape == nullptr || t.strides == nullptr))
    fail_invalid(who + " has a NULL shape or strides, expected both set");
  for (int d = 0; d < t.ndim; ++d)
    if (t.shape[d] < 0)
      fail_invalid(who + " has negative size " + std::to_string(t.shape[d]) + " in dim " + std::to_string(d));
  fail_invalid(who + " has NULL data but " + std::to_string(numel(t)) + " elements");
}

[[noreturn, gnu::cold, gnu::noinline]] inline void arity(const KernelArgs& args, const char* op,
                                                         size_t inputs, size_t outputs) {
  fail_invalid(std::string(op) + ": got " + std::to_string(args.num_inputs()) + " inputs and " +
               std::to_string(args.num_outputs()) + " outputs, expected " + std::to_string(inputs) + " and " +
               std::to_string(outputs));
}

[[noreturn, gnu::cold, gnu::noinline]] inline void dtype(const char* op, const char* role, const DLTensor& t,
                                                         DLDataType expected) {
  fail_invalid(std::string(op) + ": " + role + " has dtype " + dtype_name(t.dtype) + ", expected " +
               dtype_name(expected));
}

[[noreturn, gnu::cold, gnu::noinline]] inline void shape(const char* op, const char* role, const DLTensor& t,
                                                         const DLTensor& like, const char* like_role) {
  fail_invalid(std::string(op) + ": " + role + " has shape " + shape_text(t) + ", expected " +
               shape_text(like) + " (the shape of " + like_role + ")");
}

}  // namespace check_failures

// A sane ndim (within `limit`), shape and strides, and data unless the tensor is empty. `role` and
// `index` name the tensor ("input 1").
inline void expect_sane(const char* op, const char* role, size_t index, const DLTensor& t, NdimLimit limit) {
  if (t.ndim < 0 || t.ndim > limit.most || (t.ndim > 0 && (t.shape == nullptr || t.strides == nullptr)))
    check_failures::sane(op, role, index, t, limit);
  bool empty = false;
  for (int d = 0; d < t.ndim; ++d) {
    if (t.shape[d] < 0) check_failures::sane(op, role, index, t, limit);
    empty = empty || t.shape[d] == 0;
  }
  if (t.data == nullptr && !empty) check_failures::sane(op, role, index, t, limit);
}

// Exactly `inputs` inputs and `outputs` outputs, each sane. A backend binds its limit once,
//   inline constexpr sdk::ArityCheck expect_arity{{64, ""}};
// and calls expect_arity(args, "add", 2, 1) in every kernel.
struct ArityCheck {
  NdimLimit limit;
  void operator()(const KernelArgs& args, const char* op, size_t inputs, size_t outputs) const {
    if (args.num_inputs() != inputs || args.num_outputs() != outputs)
      check_failures::arity(args, op, inputs, outputs);
    for (size_t i = 0; i < inputs; ++i) expect_sane(op, "input", i, args.input(i), limit);
    for (size_t i = 0; i < outputs; ++i) expect_sane(op, "output", i, args.output(i), limit);
  }
};

// `role` names the tensor in messages, e.g. "input 1" or "output".
inline void expect_dtype(const char* op, const char* role, const DLTensor& t, DLDataType expected) {
  if (!same_dtype(t.dtype, expected)) check_failures::dtype(op, role, t, expected);
}

inline void expect_ndim(const char* op, const char* role, const DLTensor& t, int expected) {
  if (t.ndim != expected)
    fail_invalid(std::string(op) + ": " + role + " has ndim " + std::to_string(t.ndim) + " (shape " +
                 shape_text(t) + "), expected " + std::to_string(expected));
}

inline void expect_shape(const char* op, const char* role, const DLTensor& t, const DLTensor& like,
                         const char* like_role) {
  bool same = t.ndim == like.ndim;
  for (int d = 0; same && d < t.ndim; ++d) same = t.shape[d] == like.shape[d];
  if (!same) check_failures::shape(op, role, t, like, like_role);
}

// One input and one output, both of `dtype` and of one shape: the element-wise unary ops, copy,
// softmax.
inline void expect_unary(const KernelArgs& args, const char* op, DLDataType dtype,
                         const ArityCheck& expect_arity) {
  expect_arity(args, op, 1, 1);
  expect_dtype(op, "input 0", args.input(0), dtype);
  expect_dtype(op, "output", args.output(0), dtype);
  expect_shape(op, "output", args.output(0), args.input(0), "input 0");
}

// Two inputs and one output, all three of `dtype`: how the two-operand checks (matrix products,
// folds) begin.
inline void expect_two_in_one_out(const KernelArgs& args, const char* op, DLDataType dtype,
                                  const ArityCheck& expect_arity) {
  expect_arity(args, op, 2, 1);
  expect_dtype(op, "input 0", args.input(0), dtype);
  expect_dtype(op, "input 1", args.input(1), dtype);
  expect_dtype(op, "output", args.output(0), dtype);
}

// `why` says where `expected` comes from, e.g. "k, dim 1 of input 0".
inline void expect_dim(const char* op, const char* role, const DLTensor& t, int dim, int64_t expected,
                       const char* why) {
  if (t.shape[dim] != expected)
    fail_invalid(std::string(op) + ": " + role + " has shape " + shape_text(t) + ", expected size " +
                 std::to_string(expected) + " in dim " + std::to_string(dim) + " (" + why + ")");
}

inline void expect_contiguous(const char* op, const char* role, const DLTensor& t) {
  if (is_contiguous(t)) return;
  std::string strides = "[";
  for (int d = 0; d < t.ndim; ++d) strides += (d == 0 ? "" : ", ") + std::to_string(t.strides[d]);
  fail_invalid(std::string(op) + ": " + role + " with shape " + shape_text(t) + " has strides " + strides +
               "], expected a contiguous row-major tensor");
}

// KernelArgs's attribute accessors, with the op named in their errors.
inline int64_t int_attr(const KernelArgs& args, const char* op, const char* name) {
  try {
    return args.int_attr(name);
  } catch (const Error& e) {
    fail_invalid(std::string(op) + ": " + e.what() + ", expected an INT attribute");
  }
}

inline double float_attr(const KernelArgs& args, const char* op, const char* name) {
  try {
    return args.float_attr(name);
  } catch (const Error& e) {
    fail_invalid(std::string(op) + ": " + e.what() + ", expected a FLOAT (or INT) attribute");
  }
}

// A scalar attribute as T: FLOAT (or INT) for float dtypes, INT for integer and bool dtypes; an
// integer that does not fit T is an error rather than a silent wrap.
template <class T>
T scalar_attr(const KernelArgs& args, const char* op, const char* name) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(float_attr(args, op, name));
  } else {
    const int64_t value = int_attr(args, op, name);
    if constexpr (std::is_same_v<T, bool>) {
      return value != 0;
    } else {
      if (value < std::numeric_limits<T>::min() || value > std::numeric_limits<T>::max())
        fail_invalid(std::string(op) + ": attribute '" + name + "' is " + std::to_string(value) +
                     ", which does not fit the output dtype " + dtype_name(dtype_of<T>()));
      return static_cast<T>(value);
    }
  }
}

}  // namespace checks
}  // namespace tessera::sdk
