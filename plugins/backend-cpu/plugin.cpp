// Entry point of libtessera-backend-cpu.so: one backend, "cpu", holding every kernel of KERNELS.md.
#include <cblas.h>

#include "caching_allocator.hpp"
#include "kernels.hpp"
#include "tessera/sdk/cpp/plugin_builder.hpp"

namespace {

// OpenBLAS's own thread pool; the host asks for 1 thread while ranks run in parallel.
tessera_status set_num_threads(void*, int32_t num_threads, tessera_error*) {
  static const int default_threads = openblas_get_num_threads();
  openblas_set_num_threads(num_threads > 0 ? num_threads : default_threads);
  return TESSERA_OK;
}

void describe(tessera::sdk::PluginBuilder& plugin) {
  // Static: the host keeps pointers into the table until the plugin is unloaded.
  static tessera::sdk::BackendBuilder cpu("cpu", kDLCPU);
  tessera::cpu::register_binary_kernels(cpu);
  tessera::cpu::register_unary_kernels(cpu);
  tessera::cpu::register_cast_copy_kernels(cpu);
  tessera::cpu::register_creation_kernels(cpu);
  tessera::cpu::register_reduction_kernels(cpu);
  tessera::cpu::register_linalg_kernels(cpu);
  tessera::cpu::register_softmax_kernels(cpu);
  cpu.num_threads_function(&set_num_threads);
  cpu.memory(&tessera::cpu::cached_alloc, &tessera::cpu::cached_free, &tessera::sdk::host_memory::copy);
  plugin.add_backend(cpu);
}

}  // namespace

TESSERA_DEFINE_PLUGIN("backend-cpu", "0.1.0", "CPU kernels: strided loops, OpenBLAS for float matmul",
                      describe)
