// Device memory for the CUDA backend, with freed blocks kept for reuse.
//
// cudaMalloc and cudaFree synchronise the device and cost tens of microseconds each; simulated
// collectives and element-wise ops allocate same-sized outputs over and over. So a freed block is
// kept in a free list by its size class and handed out again; cudaMalloc runs only on a miss, and a
// miss that finds the device full releases the cache and tries once more before reporting
// TESSERA_OUT_OF_MEMORY.
#pragma once

#include "tessera/sdk/backend.h"

namespace tessera::cuda {

// The backend's alloc/free/copy (tessera_backend). alloc returns 256-byte aligned memory (what
// cudaMalloc guarantees; the SDK asks for 64) and a distinct non-null block for 0 bytes. copy takes
// the SDK's TESSERA_COPY_* directions.
tessera_status device_alloc(void* context, size_t bytes, void** out, tessera_error* error);
void device_free(void* context, void* ptr);
tessera_status device_copy(void* context, void* dst, const void* src, size_t bytes, int32_t direction,
                           tessera_error* error);

}  // namespace tessera::cuda
