// libtessera-backend-minimal.so: the smallest useful backend. Host memory, and float32 "fill" and
// "add": enough to make tensors and to all_reduce them with SUM. Every other op is reported missing
// by name when a call needs it (sdk/KERNELS.md lists what each call needs).
#include <cstdint>

#include "tessera/sdk/cpp/host_device.hpp"
#include "tessera/sdk/cpp/kernel_checks.hpp"
#include "tessera/sdk/cpp/plugin_builder.hpp"
#include "tessera/sdk/cpp/strided_loop.hpp"

namespace {

namespace sdk = tessera::sdk;

// Checks that the tensors are well formed, with at most 64 dims (strided_loop's odometer).
constexpr sdk::ArityCheck expect_arity{{64, ""}};

// fill: out[...] = value. Outputs may be any strided view; a kernel writes every element.
void fill_f32(sdk::KernelArgs& args) {
  expect_arity(args, "fill", 0, 1);
  const DLTensor& out = args.output(0);
  sdk::expect_dtype("fill", "output", out, sdk::kFloat32);
  const float value = sdk::scalar_attr<float>(args, "fill", "value");
  float* y = sdk::data_of<float>(out);
  sdk::for_each_offset<1>(out.ndim, out.shape, {&out}, [&](const auto& at) { y[at[0]] = value; });
}

// add: out = a + b, same shape and dtype. out may be the very view of a (collectives reduce in
// place), so each element is read before it is written.
void add_f32(sdk::KernelArgs& args) {
  sdk::expect_two_in_one_out(args, "add", sdk::kFloat32, expect_arity);
  const DLTensor& a = args.input(0);
  const DLTensor& b = args.input(1);
  const DLTensor& out = args.output(0);
  sdk::expect_shape("add", "input 1", b, a, "input 0");
  sdk::expect_shape("add", "output", out, a, "input 0");
  const float* x = sdk::data_of<float>(a);
  const float* z = sdk::data_of<float>(b);
  float* y = sdk::data_of<float>(out);
  sdk::for_each_offset<3>(out.ndim, out.shape, {&a, &b, &out}, [&](const auto& at) {
    y[at[2]] = sdk::hd::arithmetic(x[at[0]], z[at[1]], '+');  // one NaN for every NaN result
  });
}

void describe(sdk::PluginBuilder& plugin) {
  // BackendBuilder uses host memory (64-byte aligned) unless memory() gives other functions.
  static sdk::BackendBuilder backend("minimal", kDLCPU);
  backend.kernel<&fill_f32>("fill", sdk::kFloat32).kernel<&add_f32>("add", sdk::kFloat32);
  plugin.add_backend(backend);
}

}  // namespace

// The file is libtessera-backend-minimal.so, so `backend("minimal")` finds it with no configuration.
TESSERA_DEFINE_PLUGIN("backend-minimal", "0.1.0", "float32 fill and add on the CPU", describe)
