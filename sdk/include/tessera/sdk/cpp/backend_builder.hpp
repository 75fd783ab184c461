// Header-only helper that fills a tessera_backend table from C++ functions.
//
//   static void add_f32(tessera::sdk::KernelArgs& args) { ... }
//   tessera::sdk::BackendBuilder b("mycpu", kDLCPU);
//   b.kernel<&add_f32>("add", tessera::sdk::kFloat32);
//
// Kernels are plain C++ functions that may throw tessera::sdk::Error; the generated C trampoline
// turns any exception into a status and message, so nothing crosses the ABI as an exception.
#pragma once

#include <cstdlib>
#include <cstring>
#include <deque>
#include <vector>

#include "tessera/sdk/backend.h"
#include "tessera/sdk/cpp/errors.hpp"
#include "tessera/sdk/cpp/kernel_args.hpp"

namespace tessera::sdk {

using KernelFunction = void (*)(KernelArgs&);

template <KernelFunction Fn>
tessera_status kernel_trampoline(void*, const tessera_kernel_call* call, tessera_error* error) {
  return guarded(error, [&] {
    KernelArgs args(call);
    Fn(args);
  });
}

// Host-memory allocation for backends whose device is the CPU.
namespace host_memory {
inline tessera_status alloc(void*, size_t bytes, void** out, tessera_error* error) {
  const size_t rounded = (bytes + 63) / 64 * 64;  // aligned_alloc needs a multiple of the alignment
  *out = std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
  if (*out == nullptr) return report(error, TESSERA_OUT_OF_MEMORY, "host allocation failed");
  return TESSERA_OK;
}
inline void free(void*, void* ptr) { std::free(ptr); }
inline tessera_status copy(void*, void* dst, const void* src, size_t bytes, int32_t, tessera_error*) {
  if (bytes != 0) std::memcpy(dst, src, bytes);
  return TESSERA_OK;
}
}  // namespace host_memory

class BackendBuilder {
 public:
  BackendBuilder(const char* name, int32_t device_type) {
    table_.struct_size = sizeof(tessera_backend);
    table_.name = name;
    table_.device_type = device_type;
    table_.alloc = &host_memory::alloc;
    table_.free = &host_memory::free;
    table_.copy = &host_memory::copy;
  }
  BackendBuilder(const BackendBuilder&) = delete;
  BackendBuilder& operator=(const BackendBuilder&) = delete;

  // Replaces the default host memory functions (for devices other than the CPU).
  BackendBuilder& memory(decltype(tessera_backend::alloc) alloc, decltype(tessera_backend::free) free,
                         decltype(tessera_backend::copy) copy, void* context = nullptr) {
    table_.alloc = alloc;
    table_.free = free;
    table_.copy = copy;
    table_.context = context;
    return *this;
  }

  // Optional: how many threads one kernel call may use (0 = the backend's default).
  BackendBuilder& num_threads_function(decltype(tessera_backend::set_num_threads) set_num_threads) {
    table_.set_num_threads = set_num_threads;
    return *this;
  }

  // Optional (SDK 1.2): TESSERA_BACKEND_* bits, e.g. TESSERA_BACKEND_SHAPES_ONLY.
  BackendBuilder& flags(uint64_t flags) {
    table_.flags = flags;
    return *this;
  }

  template <KernelFunction Fn>
  BackendBuilder& kernel(const char* op, DLDataType dtype) {
    // A deque keeps every entry's address stable while more are added.
    kernels_.push_back(tessera_kernel{sizeof(tessera_kernel), op, dtype, &kernel_trampoline<Fn>});
    kernel_pointers_.push_back(&kernels_.back());
    table_.num_kernels = kernel_pointers_.size();
    table_.kernels = kernel_pointers_.data();
    return *this;
  }

  // Drops every kernel whose op `keep(op)` rejects: one set of kernel sources built into backends
  // that serve subsets (a device that lacks some ops, or a test of what each call needs).
  template <class Keep>
  BackendBuilder& retain_kernels(Keep&& keep) {
    std::vector<const tessera_kernel*> kept;
    for (const tessera_kernel* kernel : kernel_pointers_)
      if (keep(kernel->op)) kept.push_back(kernel);
    kernel_pointers_ = std::move(kept);
    table_.num_kernels = kernel_pointers_.size();
    table_.kernels = kernel_pointers_.data();
    return *this;
  }

  const tessera_backend* table() const { return &table_; }

 private:
  tessera_backend table_{};
  std::deque<tessera_kernel> kernels_;
  std::vector<const tessera_kernel*> kernel_pointers_;
};

// Registers Kernel<Op, T>::run as op Op::name for every dtype of Ts: a backend that writes a kernel
// once per family of ops (the reductions, the unary ops) registers the family's catalogue with it.
template <template <class Op, class T> class Kernel, class Op, class... Ts>
void add_op_kernels(BackendBuilder& b) {
  (b.kernel<&Kernel<Op, Ts>::run>(Op::name, dtype_of<Ts>()), ...);
}

}  // namespace tessera::sdk
