#include "device_allocator.hpp"

#include <cuda_runtime.h>

#include <bit>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

#include "tessera/sdk/cpp/errors.hpp"

namespace tessera::cuda {
namespace {

constexpr size_t kMinBlock = 512;                    // cudaMalloc's granularity is at least this
constexpr size_t kPowerOfTwoUpTo = size_t{1} << 20;  // small sizes: powers of two (few classes)
constexpr size_t kLargeGranule = size_t{2} << 20;    // larger ones: multiples of 2 MiB (bounded waste)
constexpr size_t kCacheLimit = size_t{4} << 30;      // keep at most 4 GiB of free device blocks

// Rounding to a class makes a freed block fit later requests of nearby sizes.
size_t class_size(size_t bytes) {
  if (bytes <= kMinBlock) return kMinBlock;
  if (bytes <= kPowerOfTwoUpTo) return std::bit_ceil(bytes);
  return (bytes + kLargeGranule - 1) / kLargeGranule * kLargeGranule;
}

std::string describe(const char* call, cudaError_t result) {
  return std::string(call) + ": " + cudaGetErrorName(result) + ": " + cudaGetErrorString(result);
}

// Device memory cannot hold a header the host reads (unlike the CPU allocator's), so the size of
// every live block is kept in a map beside the free list, both under one mutex: alloc and free
// come from every rank thread.
class DeviceCache {
 public:
  tessera_status allocate(size_t bytes, void** out, tessera_error* error) {
    *out = nullptr;
    if (bytes > std::numeric_limits<size_t>::max() - kLargeGranule)
      return sdk::report(
          error, TESSERA_OUT_OF_MEMORY,
          ("cuda alloc: " + std::to_string(bytes) + " bytes does not fit size_t when rounded").c_str());
    const size_t size = class_size(bytes);
    std::lock_guard lock(mutex_);
    if (auto it = free_.find(size); it != free_.end()) {
      *out = it->second;
      free_.erase(it);
      cached_bytes_ -= size;
      live_.emplace(*out, size);
      return TESSERA_OK;
    }
    cudaError_t result = cudaMalloc(out, size);
    if (result == cudaErrorMemoryAllocation) {
      // Blocks of other sizes may be what fills the device: give them all back and retry.
      (void)cudaGetLastError();
      release_all();
      result = cudaMalloc(out, size);
    }
    if (result != cudaSuccess) {
      *out = nullptr;
      (void)cudaGetLastError();
      const std::string message = describe("cudaMalloc", result) + " (asked for " + std::to_string(bytes) +
                                  " bytes, rounded to " + std::to_string(size) + ")";
      return sdk::report(error,
                         result == cudaErrorMemoryAllocation ? TESSERA_OUT_OF_MEMORY : TESSERA_INTERNAL,
                         message.c_str());
    }
    live_.emplace(*out, size);
    return TESSERA_OK;
  }

  void release(void* ptr) {
    std::lock_guard lock(mutex_);
    auto it = live_.find(ptr);
    if (it == live_.end()) return;  // not ours; free has no way to report it, and must not crash
    const size_t size = it->second;
    live_.erase(it);
    // Over the limit, drop the largest cached blocks first: they are the rarest to reuse.
    while (cached_bytes_ + size > kCacheLimit && !free_.empty()) {
      auto largest = std::prev(free_.end());
      cached_bytes_ -= largest->first;
      (void)cudaFree(largest->second);
      free_.erase(largest);
    }
    if (size > kCacheLimit) {
      (void)cudaFree(ptr);
      return;
    }
    free_.emplace(size, ptr);
    cached_bytes_ += size;
  }

 private:
  void release_all() {
    for (auto& [size, ptr] : free_) (void)cudaFree(ptr);
    free_.clear();
    cached_bytes_ = 0;
  }

  std::mutex mutex_;
  std::multimap<size_t, void*> free_;       // class size -> free block
  std::unordered_map<void*, size_t> live_;  // handed-out block -> class size
  size_t cached_bytes_ = 0;
};

// Never destroyed: tensors in statics may be freed after this plugin's statics would be, and the
// CUDA runtime itself may already be torn down at exit (cudaFree then fails harmlessly).
DeviceCache& cache() {
  static DeviceCache* instance = new DeviceCache();
  return *instance;
}

cudaMemcpyKind kind_of(int32_t direction) {
  switch (direction) {
    case TESSERA_COPY_HOST_TO_DEVICE:
      return cudaMemcpyHostToDevice;
    case TESSERA_COPY_DEVICE_TO_HOST:
      return cudaMemcpyDeviceToHost;
    case TESSERA_COPY_DEVICE_TO_DEVICE:
      return cudaMemcpyDeviceToDevice;
    default:
      return cudaMemcpyDefault;
  }
}

}  // namespace

tessera_status device_alloc(void*, size_t bytes, void** out, tessera_error* error) {
  return cache().allocate(bytes, out, error);
}

void device_free(void*, void* ptr) {
  if (ptr != nullptr) cache().release(ptr);
}

tessera_status device_copy(void*, void* dst, const void* src, size_t bytes, int32_t direction,
                           tessera_error* error) {
  const cudaMemcpyKind kind = kind_of(direction);
  if (kind == cudaMemcpyDefault)
    return sdk::report(error, TESSERA_INVALID_ARGUMENT,
                       ("cuda copy: direction " + std::to_string(direction) +
                        ", expected 1 (host to device), 2 (device to host) or 3 (device to device)")
                           .c_str());
  if (bytes == 0) return TESSERA_OK;
  // Kernels run on this thread's default stream (--default-stream per-thread), and cudaMemcpy on
  // the same stream is ordered after them. A device-to-device copy (and the last leg of one from
  // pageable host memory) may still be running when cudaMemcpy returns, while another rank's thread,
  // on its own stream, may read the destination next: so wait for the stream before returning.
  cudaError_t result = cudaMemcpy(dst, src, bytes, kind);
  const char* call = "cudaMemcpy";
  if (result == cudaSuccess) {
    result = cudaStreamSynchronize(cudaStreamPerThread);
    call = "cudaStreamSynchronize after cudaMemcpy";
  }
  if (result != cudaSuccess) {
    (void)cudaGetLastError();
    return sdk::report(error, TESSERA_INTERNAL,
                       (std::string("cuda copy: ") + describe(call, result) + " (" + std::to_string(bytes) +
                        " bytes, direction " + std::to_string(direction) + ")")
                           .c_str());
  }
  return TESSERA_OK;
}

}  // namespace tessera::cuda
