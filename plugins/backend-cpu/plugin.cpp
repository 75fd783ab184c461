// Entry point of libtessera-backend-cpu.so: one backend, "cpu", holding every kernel of KERNELS.md.

#include "caching_allocator.hpp"
#include "kernels.hpp"
#include "tessera/sdk/cpp/plugin_builder.hpp"

// Tests build a second copy of this backend under another name (tests/dtensor: "cpu2"), to check
// that code keeps tensors on the backend they came from.
#ifndef TESSERA_CPU_BACKEND_NAME
#define TESSERA_CPU_BACKEND_NAME "cpu"
#endif
// tests/comm builds a copy that declares another device type ("devlike": host memory the host must
// treat as a device's), so the core's paths for device backends run without a device.
#ifndef TESSERA_CPU_DEVICE_TYPE
#define TESSERA_CPU_DEVICE_TYPE kDLCPU
#endif

// tests/kernel_needs builds a copy whose kernels are only the ops listed in this variable
// (comma-separated), read when the plugin is queried: a backend lacking chosen kernels, to check
// what each user call needs (sdk/KERNELS.md). Never defined for the installed backend.
#ifdef TESSERA_CPU_KEEP_ONLY_VARIABLE
#include <cstdlib>
#include <string>
#endif

namespace {

// The host asks for 1 thread while ranks run in parallel, 0 (the default) otherwise. Only large
// matrix products use more than one; the count never changes their bits (see linalg.cpp).
tessera_status set_num_threads(void*, int32_t num_threads, tessera_error*) {
  tessera::cpu::set_product_threads(num_threads);
  return TESSERA_OK;
}

void describe(tessera::sdk::PluginBuilder& plugin) {
  // Static: the host keeps pointers into the table until the plugin is unloaded.
  static tessera::sdk::BackendBuilder cpu(TESSERA_CPU_BACKEND_NAME, TESSERA_CPU_DEVICE_TYPE);
  tessera::cpu::register_binary_kernels(cpu);
#ifndef TESSERA_CPU_WITHOUT_FOLDS  // a test copy: a host backend without the optional folds
  tessera::cpu::register_fold_kernels(cpu);
#endif
  tessera::cpu::register_unary_kernels(cpu);
  tessera::cpu::register_cast_copy_kernels(cpu);
  tessera::cpu::register_creation_kernels(cpu);
  tessera::cpu::register_reduction_kernels(cpu);
  tessera::cpu::register_linalg_kernels(cpu);
  tessera::cpu::register_softmax_kernels(cpu);
  tessera::cpu::register_where_kernels(cpu);
  tessera::cpu::register_cumsum_kernels(cpu);
  tessera::cpu::register_indexing_kernels(cpu);
  tessera::cpu::register_norm_kernels(cpu);
  cpu.num_threads_function(&set_num_threads);
#ifdef TESSERA_CPU_KEEP_ONLY_VARIABLE
  if (const char* keep = std::getenv(TESSERA_CPU_KEEP_ONLY_VARIABLE)) {
    const std::string listed = std::string(",") + keep + ",";
    cpu.retain_kernels(
        [&](const char* op) { return listed.find("," + std::string(op) + ",") != std::string::npos; });
  }
#endif
  cpu.memory(&tessera::cpu::cached_alloc, &tessera::cpu::cached_free, &tessera::sdk::host_memory::copy);
  plugin.add_backend(cpu);
}

}  // namespace

TESSERA_DEFINE_PLUGIN("backend-" TESSERA_CPU_BACKEND_NAME, "0.1.0",
                      "CPU kernels: strided loops, fused multiply-add tiles for float matmul", describe)
