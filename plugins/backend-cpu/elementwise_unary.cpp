// Element-wise op(a) -> out, same dtype and shape.
#include <array>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "checks.hpp"
#include "kernels.hpp"
#include "scalar.hpp"
#include "tessera/sdk/cpp/strided_loop.hpp"

namespace tessera::cpu {
namespace {

struct Neg {
  static constexpr const char* name = "neg";
  template <class T>
  static T apply(T x) {
    return wrap_neg(x);
  }
};

// abs(INT_MIN) wraps to INT_MIN, as in PyTorch.
struct Abs {
  static constexpr const char* name = "abs";
  template <class T>
  static T apply(T x) {
    if constexpr (std::is_floating_point_v<T>)
      return std::abs(x);
    else
      return x < 0 ? wrap_neg(x) : x;
  }
};

// Written as "x < 0" so that NaN, failing the comparison, passes through.
struct Relu {
  static constexpr const char* name = "relu";
  template <class T>
  static T apply(T x) {
    return x < T(0) ? T(0) : x;
  }
};

struct Exp {
  static constexpr const char* name = "exp";
  template <class T>
  static T apply(T x) {
    return std::exp(x);
  }
};

struct Log {
  static constexpr const char* name = "log";
  template <class T>
  static T apply(T x) {
    return std::log(x);
  }
};

struct Sqrt {
  static constexpr const char* name = "sqrt";
  template <class T>
  static T apply(T x) {
    return std::sqrt(x);
  }
};

struct Tanh {
  static constexpr const char* name = "tanh";
  template <class T>
  static T apply(T x) {
    return std::tanh(x);
  }
};

// exp only of non-positive values, so it never overflows to inf/inf.
struct Sigmoid {
  static constexpr const char* name = "sigmoid";
  template <class T>
  static T apply(T x) {
    if (x >= T(0)) return T(1) / (T(1) + std::exp(-x));
    const T e = std::exp(x);
    return e / (T(1) + e);
  }
};

// The exact (erf) form, not the tanh approximation.
struct Gelu {
  static constexpr const char* name = "gelu";
  template <class T>
  static T apply(T x) {
    const T sqrt2 = static_cast<T>(1.4142135623730951);
    return T(0.5) * x * (T(1) + std::erf(x / sqrt2));
  }
};

// d gelu(x) / dx = Phi(x) + x * phi(x), Phi and phi the standard normal CDF and density; what
// gelu's backward multiplies the incoming gradient by.
struct GeluGrad {
  static constexpr const char* name = "gelu_grad";
  template <class T>
  static T apply(T x) {
    const T sqrt2 = static_cast<T>(1.4142135623730951);
    const T inv_sqrt_2pi = static_cast<T>(0.3989422804014327);
    return T(0.5) * (T(1) + std::erf(x / sqrt2)) + x * inv_sqrt_2pi * std::exp(T(-0.5) * x * x);
  }
};

template <class Op, class T>
void unary_kernel(sdk::KernelArgs& args) {
  expect_arity(args, Op::name, 1, 1);
  const DLTensor& a = args.input(0);
  const DLTensor& out = args.output(0);
  expect_dtype(Op::name, "input 0", a, sdk::dtype_of<T>());
  expect_dtype(Op::name, "output", out, sdk::dtype_of<T>());
  expect_shape(Op::name, "output", out, a, "input 0");

  const T* x = sdk::data_of<const T>(a);
  T* y = sdk::data_of<T>(out);
  sdk::for_each_offset<2>(out.ndim, out.shape, {&a, &out},
                          [&](const std::array<int64_t, 2>& o) { y[o[1]] = Op::apply(x[o[0]]); });
}

template <class Op, class... Ts>
void add_kernels(sdk::BackendBuilder& b) {
  (b.kernel<&unary_kernel<Op, Ts>>(Op::name, sdk::dtype_of<Ts>()), ...);
}

}  // namespace

void register_unary_kernels(sdk::BackendBuilder& b) {
  add_kernels<Neg, float, double, int32_t, int64_t>(b);
  add_kernels<Abs, float, double, int32_t, int64_t>(b);
  add_kernels<Relu, float, double, int32_t, int64_t>(b);
  add_kernels<Exp, float, double>(b);
  add_kernels<Log, float, double>(b);
  add_kernels<Sqrt, float, double>(b);
  add_kernels<Tanh, float, double>(b);
  add_kernels<Sigmoid, float, double>(b);
  add_kernels<Gelu, float, double>(b);
  add_kernels<GeluGrad, float, double>(b);
}

}  // namespace tessera::cpu
