// Launching element kernels: grid sizing, error checks, and the synchronisation the SDK contract
// needs (a kernel call's results are visible when it returns).
//
// Every launch goes to cudaStreamPerThread: each rank runs on its own host thread, and the target is
// compiled with --default-stream per-thread, so ranks never serialise behind one another's kernels
// on the legacy default stream. Each kernel function then synchronises that stream before returning.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

#include "errors.cuh"

namespace tessera::cuda {

// check() and check_launch() (CUDA errors as sdk::Error naming the op) come from errors.cuh.

// Waits for this thread's stream: execution errors surface here, and the caller's next access
// (a copy to the host, another backend's call) sees the results.
inline void synchronize(const char* op) { check(cudaStreamSynchronize(cudaStreamPerThread), op); }

inline constexpr int kThreadsPerBlock = 256;
// Enough blocks to fill any current GPU several times over; larger n is covered by the grid-stride
// loop rather than by more blocks, which keeps the grid within the 2^31 - 1 block limit for any n.
inline constexpr int64_t kMaxBlocks = int64_t{1} << 16;

inline unsigned blocks_for(int64_t n) {
  const int64_t wanted = (n + kThreadsPerBlock - 1) / kThreadsPerBlock;
  return static_cast<unsigned>(wanted < kMaxBlocks ? wanted : kMaxBlocks);
}

// The first element index of this thread and the step between its elements, in int64 because
// tensors can have more than 2^31 elements and blockIdx.x * blockDim.x overflows unsigned.
__device__ inline int64_t grid_first() { return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ inline int64_t grid_step() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

// Runs kernel<<<...>>>(n, args...) over n elements on this thread's stream, checks the launch, and
// waits for it. n == 0 launches nothing (a zero-block grid is itself a launch error).
template <class... Params, class... Args>
void launch_elements(const char* op, void (*kernel)(int64_t, Params...), int64_t n, Args&&... args) {
  if (n <= 0) return;
  kernel<<<blocks_for(n), kThreadsPerBlock, 0, cudaStreamPerThread>>>(n, static_cast<Params>(args)...);
  check_launch(op);
  synchronize(op);
}

}  // namespace tessera::cuda
