// The element-wise unary ops of KERNELS.md (neg, abs, relu, exp, log, sqrt, tanh, sigmoid, gelu,
// gelu_grad, and from SDK 1.6 sin and cos) as one value-to-value function each, for every backend
// that has them: host code and, under nvcc, device code too. A backend writes its kernel once, as Kernel<Op,
// T>::run(KernelArgs&) applying Op::apply to every element, and registers every op on its dtypes with
//   sdk::add_unary_kernels<MyUnary>(builder);
// Integer results are exact everywhere; float ones use sdk::hd's math (host libm or CUDA's).
#pragma once

#include <cstdint>
#include <type_traits>

#include "tessera/sdk/cpp/backend_builder.hpp"
#include "tessera/sdk/cpp/host_device.hpp"

namespace tessera::sdk {

namespace unary_ops {

// Negation through the unsigned type: -INT_MIN is undefined for signed types and wraps to INT_MIN
// here, as in PyTorch.
template <class T>
TESSERA_SDK_HOST_DEVICE T negated(T x) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(U(U(0) - static_cast<U>(x)));
  } else {
    return -x;
  }
}

template <class T>
TESSERA_SDK_HOST_DEVICE T absolute(T x) {
  if constexpr (std::is_floating_point_v<T>)
    return hd::fabs(x);
  else
    return x < 0 ? negated(x) : x;
}

// exp only of non-positive values, so it never overflows to inf/inf.
template <class T>
TESSERA_SDK_HOST_DEVICE T sigmoid(T x) {
  if (x >= T(0)) return T(1) / (T(1) + hd::exp(-x));
  const T e = hd::exp(x);
  return e / (T(1) + e);
}

// The exact (erf) form, not the tanh approximation.
template <class T>
TESSERA_SDK_HOST_DEVICE T gelu(T x) {
  const T sqrt2 = static_cast<T>(1.4142135623730951);
  return T(0.5) * x * (T(1) + hd::erf(x / sqrt2));
}

// d gelu(x) / dx = Phi(x) + x * phi(x), Phi and phi the standard normal CDF and density; what
// gelu's backward multiplies the incoming gradient by.
template <class T>
TESSERA_SDK_HOST_DEVICE T gelu_grad(T x) {
  const T sqrt2 = static_cast<T>(1.4142135623730951);
  const T inv_sqrt_2pi = static_cast<T>(0.3989422804014327);
  return T(0.5) * (T(1) + hd::erf(x / sqrt2)) + x * inv_sqrt_2pi * hd::exp(T(-0.5) * x * x);
}

// One op: its KERNELS.md name and value.
#define TESSERA_SDK_UNARY_OP(Name, text, expr)    \
  struct Name {                                   \
    static constexpr const char* name = text;     \
    template <class T>                            \
    TESSERA_SDK_HOST_DEVICE static T apply(T x) { \
      return expr;                                \
    }                                             \
  };
TESSERA_SDK_UNARY_OP(Neg, "neg", negated(x))
// abs(INT_MIN) wraps to INT_MIN, as in PyTorch.
TESSERA_SDK_UNARY_OP(Abs, "abs", absolute(x))
// Written as "x < 0" so that NaN, failing the comparison, passes through.
TESSERA_SDK_UNARY_OP(Relu, "relu", x < T(0) ? T(0) : x)
TESSERA_SDK_UNARY_OP(Exp, "exp", hd::exp(x))
TESSERA_SDK_UNARY_OP(Log, "log", hd::log(x))
// Correctly rounded on both sides (IEEE on the host, nvcc's default -prec-sqrt=true on a device).
TESSERA_SDK_UNARY_OP(Sqrt, "sqrt", hd::sqrt(x))
TESSERA_SDK_UNARY_OP(Tanh, "tanh", hd::tanh(x))
TESSERA_SDK_UNARY_OP(Sigmoid, "sigmoid", sigmoid(x))
TESSERA_SDK_UNARY_OP(Gelu, "gelu", gelu(x))
TESSERA_SDK_UNARY_OP(GeluGrad, "gelu_grad", gelu_grad(x))
// SDK 1.6.
TESSERA_SDK_UNARY_OP(Sin, "sin", hd::sin(x))
TESSERA_SDK_UNARY_OP(Cos, "cos", hd::cos(x))
#undef TESSERA_SDK_UNARY_OP

}  // namespace unary_ops

template <template <class Op, class T> class Kernel>
void add_unary_kernels(BackendBuilder& b) {
  using namespace unary_ops;
  add_op_kernels<Kernel, Neg, float, double, int32_t, int64_t>(b);
  add_op_kernels<Kernel, Abs, float, double, int32_t, int64_t>(b);
  add_op_kernels<Kernel, Relu, float, double, int32_t, int64_t>(b);
  add_op_kernels<Kernel, Exp, float, double>(b);
  add_op_kernels<Kernel, Log, float, double>(b);
  add_op_kernels<Kernel, Sqrt, float, double>(b);
  add_op_kernels<Kernel, Tanh, float, double>(b);
  add_op_kernels<Kernel, Sigmoid, float, double>(b);
  add_op_kernels<Kernel, Gelu, float, double>(b);
  add_op_kernels<Kernel, GeluGrad, float, double>(b);
  add_op_kernels<Kernel, Sin, float, double>(b);
  add_op_kernels<Kernel, Cos, float, double>(b);
}

}  // namespace tessera::sdk
