// libtessera-backend-naive.so: a Tessera backend named "naive", written with the SDK's C++ helpers.
//
// It holds float32 and float64 kernels for fill, copy, cast, add, mul, mm and sum, each a plain
// loop: small and slow on purpose, the model for a third-party backend. The SDK's KERNELS.md says
// what every op means; tessera/sdk/backend.h says what a kernel may assume:
//
//  - a kernel is a C++ function taking sdk::KernelArgs. It may throw sdk::Error (or anything
//    else); the SDK's trampoline turns that into a status and a message at the ABI boundary;
//  - tensors arrive as strided DLTensors (strides in elements; 0 for a broadcast dim, negative for
//    a flipped view), so element access goes through sdk::for_each_offset, which calls the loop
//    body with the offset of the current element in every tensor it is given;
//  - outputs are allocated by the host and have the right shape; a kernel writes all of them.
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>

#include "tessera/sdk/cpp/plugin_builder.hpp"
#include "tessera/sdk/cpp/strided_loop.hpp"

namespace {

namespace sdk = tessera::sdk;

template <size_t N>
using Offsets = std::array<int64_t, N>;

// ---- Argument checks. The message is all a user sees of a failure inside a plugin, so it names
// ---- the op and what was wrong.

void check(bool ok, const std::string& message) {
  if (!ok) throw sdk::Error(TESSERA_INVALID_ARGUMENT, message);
}

std::string dtype_name(DLDataType dtype) {
  if (sdk::same_dtype(dtype, sdk::kFloat32)) return "float32";
  if (sdk::same_dtype(dtype, sdk::kFloat64)) return "float64";
  if (sdk::same_dtype(dtype, sdk::kInt32)) return "int32";
  if (sdk::same_dtype(dtype, sdk::kInt64)) return "int64";
  if (sdk::same_dtype(dtype, sdk::kBool)) return "bool";
  return "an unknown dtype";
}

void check_arity(const sdk::KernelArgs& args, const std::string& op, size_t inputs, size_t outputs) {
  check(args.num_inputs() == inputs && args.num_outputs() == outputs,
        op + ": expected " + std::to_string(inputs) + " inputs and " + std::to_string(outputs) +
            " outputs, got " + std::to_string(args.num_inputs()) + " and " +
            std::to_string(args.num_outputs()));
}

void check_dtype(const std::string& op, const DLTensor& t, DLDataType expected) {
  check(sdk::same_dtype(t.dtype, expected),
        op + ": expected " + dtype_name(expected) + " tensors, got " + dtype_name(t.dtype));
}

void check_same_shape(const std::string& op, const DLTensor& a, const DLTensor& b) {
  bool same = a.ndim == b.ndim;
  for (int d = 0; same && d < a.ndim; ++d) same = a.shape[d] == b.shape[d];
  check(same, op + ": input and output shapes differ");
}

// ---- Creation and copies.

// fill: out[...] = value. The host passes `value` as a FLOAT attribute for float dtypes.
template <class T>
void fill(sdk::KernelArgs& args) {
  check_arity(args, "fill", 0, 1);
  const DLTensor& out = args.output(0);
  check_dtype("fill", out, sdk::dtype_of<T>());
  const T value = static_cast<T>(args.float_attr("value"));
  T* y = sdk::data_of<T>(out);
  sdk::for_each_offset<1>(out.ndim, out.shape, {&out}, [&](const Offsets<1>& o) { y[o[0]] = value; });
}

// copy: out = a, same dtype, both with any strides.
template <class T>
void copy(sdk::KernelArgs& args) {
  check_arity(args, "copy", 1, 1);
  const DLTensor& a = args.input(0);
  const DLTensor& out = args.output(0);
  check_dtype("copy", a, sdk::dtype_of<T>());
  check_dtype("copy", out, sdk::dtype_of<T>());
  check_same_shape("copy", a, out);
  const T* x = sdk::data_of<const T>(a);
  T* y = sdk::data_of<T>(out);
  sdk::for_each_offset<2>(out.ndim, out.shape, {&a, &out}, [&](const Offsets<2>& o) { y[o[1]] = x[o[0]]; });
}

// One float converted to D by KERNELS.md's rules. static_cast alone is undefined behaviour for NaN
// and out-of-range floats going to an integer type, hence the explicit cases.
template <class D, class S>
D convert(S x) {
  if constexpr (std::is_same_v<D, bool>) {
    return x != S(0);
  } else if constexpr (std::is_integral_v<D>) {
    if (std::isnan(x)) return 0;
    if (x >= static_cast<S>(std::numeric_limits<D>::max())) return std::numeric_limits<D>::max();
    if (x <= static_cast<S>(std::numeric_limits<D>::min())) return std::numeric_limits<D>::min();
    return static_cast<D>(x);  // truncates toward zero
  } else {
    return static_cast<D>(x);
  }
}

template <class S, class D>
void cast_to(const DLTensor& a, const DLTensor& out) {
  const S* x = sdk::data_of<const S>(a);
  D* y = sdk::data_of<D>(out);
  sdk::for_each_offset<2>(out.ndim, out.shape, {&a, &out},
                          [&](const Offsets<2>& o) { y[o[1]] = convert<D>(x[o[0]]); });
}

// cast: registered under the source dtype S; the output may have any of the five dtypes.
template <class S>
void cast(sdk::KernelArgs& args) {
  check_arity(args, "cast", 1, 1);
  const DLTensor& a = args.input(0);
  const DLTensor& out = args.output(0);
  check_dtype("cast", a, sdk::dtype_of<S>());
  check_same_shape("cast", a, out);
  if (sdk::same_dtype(out.dtype, sdk::kFloat32)) return cast_to<S, float>(a, out);
  if (sdk::same_dtype(out.dtype, sdk::kFloat64)) return cast_to<S, double>(a, out);
  if (sdk::same_dtype(out.dtype, sdk::kInt32)) return cast_to<S, int32_t>(a, out);
  if (sdk::same_dtype(out.dtype, sdk::kInt64)) return cast_to<S, int64_t>(a, out);
  if (sdk::same_dtype(out.dtype, sdk::kBool)) return cast_to<S, bool>(a, out);
  check(false, "cast: cannot cast to " + dtype_name(out.dtype));
}

// ---- Element-wise arithmetic. Broadcasting is already done: the host gives a, b and out one shape,
// ---- with stride 0 along broadcast dims.

template <class T, class Op>
void binary(sdk::KernelArgs& args, const std::string& op, Op apply) {
  check_arity(args, op, 2, 1);
  const DLTensor& a = args.input(0);
  const DLTensor& b = args.input(1);
  const DLTensor& out = args.output(0);
  for (const DLTensor* t : {&a, &b, &out}) check_dtype(op, *t, sdk::dtype_of<T>());
  check_same_shape(op, a, out);
  check_same_shape(op, b, out);
  const T* x = sdk::data_of<const T>(a);
  const T* y = sdk::data_of<const T>(b);
  T* z = sdk::data_of<T>(out);
  sdk::for_each_offset<3>(out.ndim, out.shape, {&a, &b, &out},
                          [&](const Offsets<3>& o) { z[o[2]] = apply(x[o[0]], y[o[1]]); });
}

template <class T>
void add(sdk::KernelArgs& args) {
  binary<T>(args, "add", std::plus<T>());
}

template <class T>
void mul(sdk::KernelArgs& args) {
  binary<T>(args, "mul", std::multiplies<T>());
}

// ---- Linear algebra.

// mm: out[m, n] = a[m, k] x b[k, n], the textbook triple loop over strided operands.
template <class T>
void mm(sdk::KernelArgs& args) {
  check_arity(args, "mm", 2, 1);
  const DLTensor& a = args.input(0);
  const DLTensor& b = args.input(1);
  const DLTensor& out = args.output(0);
  for (const DLTensor* t : {&a, &b, &out}) {
    check_dtype("mm", *t, sdk::dtype_of<T>());
    check(t->ndim == 2, "mm: expected 2-d tensors");
  }
  const int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
  check(b.shape[0] == k && out.shape[0] == m && out.shape[1] == n,
        "mm: shapes do not match [m, k] x [k, n] -> [m, n]");

  const T* x = sdk::data_of<const T>(a);
  const T* y = sdk::data_of<const T>(b);
  T* z = sdk::data_of<T>(out);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      T acc = 0;
      for (int64_t p = 0; p < k; ++p)
        acc += x[i * a.strides[0] + p * a.strides[1]] * y[p * b.strides[0] + j * b.strides[1]];
      z[i * out.strides[0] + j * out.strides[1]] = acc;
    }
  }
}

// ---- Reductions.

// sum: a has shape [outer..., reduced...] where the attribute reduce_ndim counts the reduced dims;
// out is contiguous with one element per outer index. Each sum accumulates in T, in row-major order
// of the reduced dims, as KERNELS.md asks, so results are reproducible bit for bit.
template <class T>
void sum(sdk::KernelArgs& args) {
  check_arity(args, "sum", 1, 1);
  const DLTensor& a = args.input(0);
  const DLTensor& out = args.output(0);
  check_dtype("sum", a, sdk::dtype_of<T>());
  check_dtype("sum", out, sdk::dtype_of<T>());
  const int64_t reduce_ndim = args.int_attr("reduce_ndim");
  check(reduce_ndim >= 0 && reduce_ndim <= a.ndim, "sum: reduce_ndim is out of range");
  const int kept_ndim = a.ndim - static_cast<int>(reduce_ndim);
  int64_t outer = 1;  // elements of out
  for (int d = 0; d < kept_ndim; ++d) outer *= a.shape[d];
  int64_t reduced = 1;  // elements summed into each of them
  for (int d = kept_ndim; d < a.ndim; ++d) reduced *= a.shape[d];
  check(sdk::numel(out) == outer && sdk::is_contiguous(out),
        "sum: expected a contiguous output, one element per kept index");

  T* y = sdk::data_of<T>(out);
  for (int64_t i = 0; i < outer; ++i) y[i] = 0;  // also the sum of an empty range
  // Walking a in row-major order visits each outer index's `reduced` elements in turn.
  int64_t visited = 0;
  const T* x = sdk::data_of<const T>(a);
  sdk::for_each_offset<1>(a.ndim, a.shape, {&a},
                          [&](const Offsets<1>& o) { y[visited++ / reduced] += x[o[0]]; });
}

// ---- The plugin.

template <class T>
void register_kernels(sdk::BackendBuilder& backend) {
  constexpr DLDataType dtype = sdk::dtype_of<T>();  // the dtype each kernel is looked up by
  backend.kernel<&fill<T>>("fill", dtype);
  backend.kernel<&copy<T>>("copy", dtype);
  backend.kernel<&cast<T>>("cast", dtype);
  backend.kernel<&add<T>>("add", dtype);
  backend.kernel<&mul<T>>("mul", dtype);
  backend.kernel<&mm<T>>("mm", dtype);
  backend.kernel<&sum<T>>("sum", dtype);
}

void describe(sdk::PluginBuilder& plugin) {
  // Static: the host keeps pointers into the table for as long as the plugin is loaded. The
  // builder's default memory functions allocate host memory, right for a kDLCPU device.
  static sdk::BackendBuilder naive("naive", kDLCPU);
  register_kernels<float>(naive);
  register_kernels<double>(naive);
  plugin.add_backend(naive);
}

}  // namespace

// Exports tessera_plugin_query, the plugin's only symbol.
TESSERA_DEFINE_PLUGIN("backend-naive", "0.1.0", "Example out-of-tree backend: plain loops, float32/float64",
                      describe)
