// A minimal, valid backend for the plugin tests: "testdev", host memory, and only the float32
// "fill" and "copy" kernels (enough to make, fill, view and read back a tensor; nothing else).
#include <array>
#include <cstdint>

#include "tessera/sdk/cpp/plugin_builder.hpp"
#include "tessera/sdk/cpp/strided_loop.hpp"

namespace {

using tessera::sdk::KernelArgs;

void fill_f32(KernelArgs& args) {
  const DLTensor& out = args.output(0);
  const auto value = static_cast<float>(args.float_attr("value"));
  float* y = tessera::sdk::data_of<float>(out);
  tessera::sdk::for_each_offset<1>(out.ndim, out.shape, {&out},
                                   [&](const std::array<int64_t, 1>& o) { y[o[0]] = value; });
}

void copy_f32(KernelArgs& args) {
  const DLTensor& in = args.input(0);
  const DLTensor& out = args.output(0);
  const float* x = tessera::sdk::data_of<const float>(in);
  float* y = tessera::sdk::data_of<float>(out);
  tessera::sdk::for_each_offset<2>(out.ndim, out.shape, {&in, &out},
                                   [&](const std::array<int64_t, 2>& o) { y[o[1]] = x[o[0]]; });
}

void describe(tessera::sdk::PluginBuilder& plugin) {
  static tessera::sdk::BackendBuilder testdev("testdev", kDLCPU);
  testdev.kernel<&fill_f32>("fill", tessera::sdk::kFloat32);
  testdev.kernel<&copy_f32>("copy", tessera::sdk::kFloat32);
  plugin.add_backend(testdev);
}

}  // namespace

TESSERA_DEFINE_PLUGIN("backend-testdev", "9.8.7", "test backend: float32 fill and copy only", describe)
