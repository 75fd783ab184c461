// The CUDA backend's argument checks: the SDK's (sdk/cpp/kernel_checks.hpp), the same rules and
// messages as the CPU backend's (tools/conformance compares the two, errors included), with this
// backend's dimension limit bound in. Host code only: it reads DLTensor shapes, which live in host
// memory.
#pragma once

#include <string>

#include "tessera/sdk/cpp/kernel_checks.hpp"

namespace tessera::cuda {

using namespace sdk::checks;

// The most dims a view can carry into a kernel (StridedView in strided_index.cuh). A fixed bound
// keeps that struct a plain value (272 bytes; three operands fit easily in the 4 KiB of kernel
// parameters). The CPU backend allows 64; deeper tensors are refused here with a clear error
// instead of being mishandled. It lives here so that host-only sources can check against it.
inline constexpr int kMaxDeviceNdim = 16;
inline constexpr sdk::ArityCheck expect_arity{
    {kMaxDeviceNdim, " (the most dims the CUDA backend passes to a kernel)"}};

[[noreturn]] inline void fail(const std::string& message) { sdk::fail_invalid(message); }

}  // namespace tessera::cuda
