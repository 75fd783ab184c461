// Argument validation for the CUDA kernels, with the same rules and messages as the CPU backend
// (tools/conformance compares the two, errors included). Every check throws
// sdk::Error(TESSERA_INVALID_ARGUMENT) naming the op, the tensor, the offending value and what was
// expected. Host code only: it reads DLTensor shapes, which live in host memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "tessera/sdk/cpp/kernel_args.hpp"

namespace tessera::cuda {

// The most dims a view can carry into a kernel (StridedView in strided_index.cuh). A fixed bound
// keeps that struct a plain value (272 bytes; three operands fit easily in the 4 KiB of kernel
// parameters). The CPU backend allows 64; deeper tensors are refused here with a clear error
// instead of being mishandled. It lives here so that host-only sources can check against it.
inline constexpr int kMaxDeviceNdim = 16;

std::string dtype_name(DLDataType dtype);
std::string shape_text(const DLTensor& t);

[[noreturn]] void fail(const std::string& message);

// A sane ndim (at most what a StridedView carries), shape, strides and, unless the tensor is
// empty, data. `role` and `index` name the tensor ("input 1").
void expect_sane(const char* op, const char* role, size_t index, const DLTensor& t);
// Exactly `inputs` inputs and `outputs` outputs, each sane.
void expect_arity(const sdk::KernelArgs& args, const char* op, size_t inputs, size_t outputs);
// `role` names the tensor in messages, e.g. "input 1" or "output".
void expect_dtype(const char* op, const char* role, const DLTensor& t, DLDataType expected);
void expect_ndim(const char* op, const char* role, const DLTensor& t, int expected);
void expect_shape(const char* op, const char* role, const DLTensor& t, const DLTensor& like, const char* like_role);
// `why` says where `expected` comes from, e.g. "k, dim 1 of input 0".
void expect_dim(const char* op, const char* role, const DLTensor& t, int dim, int64_t expected, const char* why);
void expect_contiguous(const char* op, const char* role, const DLTensor& t);

// KernelArgs's attribute accessors, with the op named in their errors.
int64_t int_attr(const sdk::KernelArgs& args, const char* op, const char* name);
double float_attr(const sdk::KernelArgs& args, const char* op, const char* name);

}  // namespace tessera::cuda
