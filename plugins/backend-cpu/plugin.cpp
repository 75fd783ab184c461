// Entry point of libtessera-backend-cpu.so: one backend, "cpu", holding every kernel of KERNELS.md.
#include "kernels.hpp"
#include "tessera/sdk/cpp/plugin_builder.hpp"

namespace {

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
  plugin.add_backend(cpu);
}

}  // namespace

TESSERA_DEFINE_PLUGIN("backend-cpu", "0.1.0", "CPU kernels: strided loops, OpenBLAS for float matmul",
                      describe)
