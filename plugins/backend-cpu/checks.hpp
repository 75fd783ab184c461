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

// Exactly `inputs` inputs and `outputs` outputs, each with a sane ndim, shape and strides.
void expect_arity(const sdk::KernelArgs& args, const char* op, size_t inputs, size_t outputs);

// `role` names the tensor in messages, e.g. "input 1" or "output".
void expect_dtype(const char* op, const char* role, const DLTensor& t, DLDataType expected);
void expect_ndim(const char* op, const char* role, const DLTensor& t, int expected);
void expect_shape(const char* op, const char* role, const DLTensor& t, const DLTensor& like,
                  const char* like_role);
// `why` says where `expected` comes from, e.g. "k, dim 1 of input 0".
void expect_dim(const char* op, const char* role, const DLTensor& t, int dim, int64_t expected,
                const char* why);
void expect_contiguous(const char* op, const char* role, const DLTensor& t);

// KernelArgs's attribute accessors, with the op named in their errors.
int64_t int_attr(const sdk::KernelArgs& args, const char* op, const char* name);
double float_attr(const sdk::KernelArgs& args, const char* op, const char* name);

[[noreturn]] void fail(const std::string& message);

}  // namespace tessera::cpu
