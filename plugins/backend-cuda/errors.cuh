// CUDA and cuBLAS failures as tessera::sdk::Error: every call the backend makes into the CUDA
// runtime or cuBLAS goes through check(), so a failure reaches the host (via BackendBuilder's
// guard, never as an exception across the C ABI) as "<call>: <error name>: <error string>".
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string>

#include "tessera/sdk/cpp/errors.hpp"

namespace tessera::cuda {

// Allocation failures are the caller's to handle (free caches, smaller batches), so they keep
// their own status; everything else is a broken device or a bug, hence TESSERA_INTERNAL.
inline void check(cudaError_t result, const char* call) {
  if (result == cudaSuccess) return;
  const tessera_status code = result == cudaErrorMemoryAllocation ? TESSERA_OUT_OF_MEMORY : TESSERA_INTERNAL;
  throw sdk::Error(code,
                   std::string(call) + ": " + cudaGetErrorName(result) + ": " + cudaGetErrorString(result));
}

// cuBLAS has a name function but no separate description; cublasGetStatusString gives the text.
inline void check(cublasStatus_t result, const char* call) {
  if (result == CUBLAS_STATUS_SUCCESS) return;
  const tessera_status code = result == CUBLAS_STATUS_ALLOC_FAILED ? TESSERA_OUT_OF_MEMORY : TESSERA_INTERNAL;
  throw sdk::Error(
      code, std::string(call) + ": " + cublasGetStatusName(result) + ": " + cublasGetStatusString(result));
}

// After a kernel launch: a bad configuration shows up only through cudaGetLastError, and it must
// be read (and so cleared) before the next runtime call on this thread misreports it.
inline void check_launch(const char* op) { check(cudaGetLastError(), op); }

}  // namespace tessera::cuda

// Names the call in the message by its source text, e.g. "cudaMalloc(&p, bytes): cudaError...".
#define TESSERA_CUDA_CHECK(call) ::tessera::cuda::check((call), #call)
