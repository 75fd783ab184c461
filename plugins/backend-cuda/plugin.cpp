// Entry point of libtessera-backend-cuda.so: one backend, "cuda" (kDLCUDA), holding every kernel of
// sdk/KERNELS.md. The plugin loads on any machine that has the CUDA runtime libraries; its init
// refuses the host, naming the reason, where there is no driver or no device, so that the host and
// tessera-conformance report the backend as unavailable rather than failing on the first kernel.
#include <cuda_runtime.h>

#include <string>

#include "device_allocator.hpp"
#include "kernels.hpp"
#include "tessera/sdk/cpp/plugin_builder.hpp"

namespace {

std::string error_text(cudaError_t result) {
  return std::string(cudaGetErrorName(result)) + " (" + cudaGetErrorString(result) + ")";
}

// CUDA versions as the toolkit writes them: 13000 is "13.0".
std::string version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10) + " (" +
         std::to_string(version) + ")";
}

// The driver and device checks, each refusal naming the CUDA call, its error and what would fix it.
// cudaGetDeviceCount fails before any device is looked at when there is no driver, or one older
// than the runtime this plugin was built with; cudaDriverGetVersion tells those apart.
void require_device(const tessera_host_info&) {
  int count = 0;
  const cudaError_t result = cudaGetDeviceCount(&count);
  (void)cudaGetLastError();  // a failed runtime call is sticky per thread until read
  if (result == cudaErrorNoDevice)
    throw tessera::sdk::Error(TESSERA_UNIMPLEMENTED,
                              "no CUDA device: cudaGetDeviceCount returned " + error_text(result));
  if (result != cudaSuccess) {
    int driver = 0;
    (void)cudaDriverGetVersion(&driver);  // sets 0 when no driver is installed
    const std::string call = "cudaGetDeviceCount returned " + error_text(result);
    if (driver == 0)
      throw tessera::sdk::Error(
          TESSERA_UNIMPLEMENTED,
          "no CUDA driver: " + call + ", and cudaDriverGetVersion finds no driver installed");
    if (driver < CUDART_VERSION)
      throw tessera::sdk::Error(TESSERA_UNIMPLEMENTED,
                                "CUDA driver too old: " + call + "; the driver supports CUDA " +
                                    version_text(driver) + ", this plugin needs at least " +
                                    version_text(CUDART_VERSION));
    throw tessera::sdk::Error(TESSERA_UNIMPLEMENTED, "CUDA unusable: " + call + " (driver supports CUDA " +
                                                         version_text(driver) + ")");
  }
  if (count == 0)
    throw tessera::sdk::Error(TESSERA_UNIMPLEMENTED, "no CUDA device: cudaGetDeviceCount found 0 devices");
}

void describe(tessera::sdk::PluginBuilder& plugin) {
  // Static: the host keeps pointers into the table until the plugin is unloaded.
  static tessera::sdk::BackendBuilder cuda("cuda", kDLCUDA);
  tessera::cuda::register_binary_kernels(cuda);
  tessera::cuda::register_unary_kernels(cuda);
  tessera::cuda::register_cast_copy_kernels(cuda);
  tessera::cuda::register_creation_kernels(cuda);
  tessera::cuda::register_reduction_kernels(cuda);
  tessera::cuda::register_linalg_kernels(cuda);
  tessera::cuda::register_softmax_kernels(cuda);
  tessera::cuda::register_where_kernels(cuda);
  tessera::cuda::register_cumsum_kernels(cuda);
  tessera::cuda::register_indexing_kernels(cuda);
  tessera::cuda::register_norm_kernels(cuda);
  cuda.memory(&tessera::cuda::device_alloc, &tessera::cuda::device_free, &tessera::cuda::device_copy);
  plugin.add_backend(cuda);
  plugin.on_init(&require_device);
}

}  // namespace

TESSERA_DEFINE_PLUGIN("backend-cuda", "0.1.0",
                      "CUDA kernels: strided element kernels, cuBLAS for float matmul", describe)
