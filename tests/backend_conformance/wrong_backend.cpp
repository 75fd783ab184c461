// libtessera-backend-wrong.so: a test backend "wrong" whose float32 `add` is off by one ulp on the
// last element of every result (fill, copy and cast are right). The conformance suite must fail it
// and name the op: a kernel can be wrong in a way no error reports, and only comparing values
// against the oracle finds it.
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "tessera/sdk/cpp/plugin_builder.hpp"
#include "tessera/sdk/cpp/strided_loop.hpp"

namespace {

namespace sdk = tessera::sdk;

void require(bool ok, const std::string& what) {
  if (!ok) throw sdk::Error(TESSERA_INVALID_ARGUMENT, "backend 'wrong': " + what);
}

bool is_float32(const DLTensor& t) { return sdk::same_dtype(t.dtype, sdk::kFloat32); }

void fill_f32(sdk::KernelArgs& args) {
  const DLTensor& out = args.output(0);
  require(is_float32(out), "fill: expected a float32 output");
  float* y = sdk::data_of<float>(out);
  const auto value = static_cast<float>(args.float_attr("value"));
  sdk::for_each_offset<1>(out.ndim, out.shape, {&out},
                          [&](const std::array<int64_t, 1>& o) { y[o[0]] = value; });
}

void copy_f32(sdk::KernelArgs& args) {
  const DLTensor& a = args.input(0);
  const DLTensor& out = args.output(0);
  require(is_float32(a) && is_float32(out), "copy: expected float32 tensors");
  const float* x = sdk::data_of<const float>(a);
  float* y = sdk::data_of<float>(out);
  sdk::for_each_offset<2>(out.ndim, out.shape, {&a, &out},
                          [&](const std::array<int64_t, 2>& o) { y[o[1]] = x[o[0]]; });
}

// float32 to each dtype by KERNELS.md's rules (truncation, NaN -> 0, saturation, != 0 for bool).
template <class D>
D converted(float x) {
  if constexpr (std::is_same_v<D, bool>) {
    return x != 0.0f;
  } else if constexpr (std::is_integral_v<D>) {
    if (std::isnan(x)) return 0;
    if (x >= static_cast<float>(std::numeric_limits<D>::max())) return std::numeric_limits<D>::max();
    if (x <= static_cast<float>(std::numeric_limits<D>::min())) return std::numeric_limits<D>::min();
    return static_cast<D>(x);
  } else {
    return static_cast<D>(x);
  }
}

template <class D>
void cast_into(const DLTensor& a, const DLTensor& out) {
  const float* x = sdk::data_of<const float>(a);
  D* y = sdk::data_of<D>(out);
  sdk::for_each_offset<2>(out.ndim, out.shape, {&a, &out},
                          [&](const std::array<int64_t, 2>& o) { y[o[1]] = converted<D>(x[o[0]]); });
}

void cast_f32(sdk::KernelArgs& args) {
  const DLTensor& a = args.input(0);
  const DLTensor& out = args.output(0);
  require(is_float32(a), "cast: expected a float32 input");
  if (sdk::same_dtype(out.dtype, sdk::kFloat32)) return cast_into<float>(a, out);
  if (sdk::same_dtype(out.dtype, sdk::kFloat64)) return cast_into<double>(a, out);
  if (sdk::same_dtype(out.dtype, sdk::kInt32)) return cast_into<int32_t>(a, out);
  if (sdk::same_dtype(out.dtype, sdk::kInt64)) return cast_into<int64_t>(a, out);
  if (sdk::same_dtype(out.dtype, sdk::kBool)) return cast_into<bool>(a, out);
  require(false, "cast: unknown output dtype");
}

// The deliberate bug: the element written last (row-major) gets the next float up.
void add_f32_off_by_one_ulp(sdk::KernelArgs& args) {
  const DLTensor& a = args.input(0);
  const DLTensor& b = args.input(1);
  const DLTensor& out = args.output(0);
  require(is_float32(a) && is_float32(b) && is_float32(out), "add: expected float32 tensors");
  const float* x = sdk::data_of<const float>(a);
  const float* y = sdk::data_of<const float>(b);
  float* z = sdk::data_of<float>(out);
  const int64_t last = sdk::numel(out) - 1;
  int64_t index = 0;
  sdk::for_each_offset<3>(out.ndim, out.shape, {&a, &b, &out}, [&](const std::array<int64_t, 3>& o) {
    const float sum = x[o[0]] + y[o[1]];
    z[o[2]] = index++ == last ? std::nextafter(sum, std::numeric_limits<float>::infinity()) : sum;
  });
}

void describe(sdk::PluginBuilder& plugin) {
  static sdk::BackendBuilder wrong("wrong", kDLCPU);
  wrong.kernel<&fill_f32>("fill", sdk::kFloat32);
  wrong.kernel<&copy_f32>("copy", sdk::kFloat32);
  wrong.kernel<&cast_f32>("cast", sdk::kFloat32);
  wrong.kernel<&add_f32_off_by_one_ulp>("add", sdk::kFloat32);
  plugin.add_backend(wrong);
}

}  // namespace

TESSERA_DEFINE_PLUGIN("backend-wrong", "0.1.0", "Test backend whose float32 add is off by one ulp", describe)
